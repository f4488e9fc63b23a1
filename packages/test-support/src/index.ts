export {
  type Fault,
  type FaultServer,
  type FaultTarget,
  faultServer,
  type NetworkFaultCase,
  networkFaultCases,
  refusedPort,
  type TlsServer,
  tlsServer,
  unresolvableHost
} from "./networkFaults.js"
export { freePort } from "./ports.js"
export {
  type Cluster as PostgresCluster,
  scoped as scopedPostgresCluster,
  startCluster as startPostgresCluster
} from "./postgres.js"
export { type RedisServer, startRedisServer } from "./redis.js"
export { type SmallDisk, smallDisk } from "./smallDisk.js"
export { scopedTempDir, type TempDir, tempDir } from "./tempDir.js"
