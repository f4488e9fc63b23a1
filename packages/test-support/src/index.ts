export { type EnvironmentChanges, withEnvironment, withoutAwsCredentials } from "./environment.ts"
export { type MountedFlow, type MountedFlowOptions, mountedFlow, mountedFlowFile } from "./mountedFlow.ts"
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
} from "./networkFaults.ts"
export { isRunning, type Peer, type PeerOptions, scopedPeer, spawnPeer } from "./peer.ts"
export { freePort } from "./ports.ts"
export {
  type Cluster as PostgresCluster,
  scoped as scopedPostgresCluster,
  startCluster as startPostgresCluster
} from "./postgres.ts"
export { type RedisServer, startRedisServer } from "./redis.ts"
export { rejection } from "./rejection.ts"
export { type SmallDisk, smallDisk } from "./smallDisk.ts"
export {
  type Answer,
  type RecordedRequest,
  type StandInFault,
  type StandInServer,
  type StandInServerOptions,
  startStandIn
} from "./standIn.ts"
export { type Starter, startAll } from "./startAll.ts"
export { scopedTempDir, type TempDir, tempDir } from "./tempDir.ts"
export { type SelfSignedCertificate, selfSignedCertificate } from "./tls.ts"
