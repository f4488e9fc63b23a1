export { freePort } from "./ports.js"
export {
  type Cluster as PostgresCluster,
  scoped as scopedPostgresCluster,
  startCluster as startPostgresCluster
} from "./postgres.js"
export { type RedisServer, startRedisServer } from "./redis.js"
export { scopedTempDir, type TempDir, tempDir } from "./tempDir.js"
export { type SelfSignedCertificate, selfSignedCertificate } from "./tls.js"
