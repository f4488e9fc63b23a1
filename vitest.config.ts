import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources, so tests need no build.
  resolve: { conditions: ["@mailroom/source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["@mailroom/source", ...defaultServerConditions] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 30_000
  }
})
