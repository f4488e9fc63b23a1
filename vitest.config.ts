import { availableParallelism } from "node:os"
import { defaultServerConditions } from "vite"
import { configDefaults, defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

// Workspace packages resolve to their TypeScript sources, so tests need no build. "module" is left
// out: it makes Vite pick the AWS SDK's dist-es build, whose extensionless imports Node cannot load.
const conditions = ["@mailroom/source", ...defaultServerConditions.filter((c) => c !== "module")]

// Files that change what the whole process sees and leave it changed, or that import modules which
// read the environment once: each runs in a fresh worker, as its own process. Every other file
// shares a worker with the files before it, so Effect, the SDKs and the packages are loaded once per
// worker rather than once per file (half the suite's CPU time). A test file that sets process.env or
// stubs a global and does not put it back (test-support's withEnvironment, withoutAwsCredentials,
// vi.unstubAllGlobals in a finalizer) belongs in this list.
const ownProcess = [
  // Example apps configured through the environment (set for the file, never put back), each
  // imported as a fresh process would import it.
  "examples/aws/test/*.test.ts",
  "examples/nextjs/test/*.test.ts",
  "examples/resend/test/*.test.ts",
  "examples/smtp/test/*.test.ts"
]

// The files that wait longest on real peers and real timers (10 s or more each). They start first:
// on a fresh clone Vitest has no durations yet and would order by file size, leaving one of them
// to run alone at the end. Once a run has recorded durations, those order the rest.
const slowest = [
  "packages/server/test/scheduled.test.ts",
  "packages/server/test/eventsRedis.test.ts",
  "packages/server/test/scheduledFleet.test.ts",
  "packages/server/test/smtp.test.ts",
  "packages/server/test/fileHandles.test.ts",
  "packages/server/test/viewerQuickstart.test.ts",
  "packages/sqlite/test/PersistedQueue.test.ts",
  "packages/server/test/viewerLayout.test.ts",
  "packages/server/test/startup.test.ts",
  "packages/server/test/viewer.test.ts",
  "packages/redis/test/RedisQueueStore.test.ts"
]

class SlowestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const i = slowest.findIndex((path) => spec.moduleId.endsWith(`/${path}`))
      return i === -1 ? slowest.length : i
    }
    // A stable sort: the rest keep Vitest's order (failed first, then longest, isolated first).
    return sorted.toSorted((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // Most files wait on peers (servers, databases, a browser) far more than they compute: twice as
    // many workers as cores keeps the cores busy. Vitest's default, one fewer than the cores, runs
    // the files one at a time on two cores.
    maxWorkers: availableParallelism() * 2,
    sequence: { sequencer: SlowestFirst },
    // Ceph's radosgw, the strict S3 peer: one cluster for the run, started when a test first asks.
    globalSetup: ["packages/s3/test/support/radosgwSetup.ts"],
    testTimeout: 30_000,
    projects: [
      { extends: true, test: { name: "own-process", include: ownProcess, isolate: true } },
      {
        extends: true,
        test: {
          name: "shared",
          include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ownProcess],
          isolate: false
        }
      }
    ]
  }
})
