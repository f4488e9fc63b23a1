export * as SqlMessageLog from "./SqlMessageLog.js"
export * as SqlMigrations from "./SqlMigrations.js"
export * as SqlSuppressions from "./SqlSuppressions.js"
