import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources, so tests need no build. "module" is left
// out: it makes Vite pick the AWS SDK's dist-es build, whose extensionless imports Node cannot load.
const conditions = ["@mailroom/source", ...defaultServerConditions.filter((c) => c !== "module")]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
    // Ceph's radosgw, the strict S3 peer: one cluster for the run, started when a test first asks.
    globalSetup: ["packages/s3/test/support/radosgwSetup.ts"],
    testTimeout: 30_000
  }
})
