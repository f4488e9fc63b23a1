#!/usr/bin/env node
// The `mailroom` command: Node's module compile cache on (node:module's enableCompileCache), then the server.
// Built as a bundle (scripts/bundle.ts): this module is dist/bin.js, the server a dozen chunks in
// dist/start/ whose compiled code the cache keeps for the next start. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
process.getBuiltinModule("node:module").enableCompileCache?.()
await import("./internal/cli.js")
