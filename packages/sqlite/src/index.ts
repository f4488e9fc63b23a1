// Stands in for @effect/sql-sqlite-node until it ships a release for effect 4.1; then this package retires.
export * as SqliteClient from "./SqliteClient.js"
