export * as PostgresMigrations from "./PostgresMigrations.js"
export * as PostgresOrganizations from "./PostgresOrganizations.js"
