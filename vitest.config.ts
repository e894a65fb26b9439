import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Suites that peer-skips.test.ts runs in a child vitest of its own.
    exclude: ['**/node_modules/**', '__test__/fixtures/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The default report, then one line per missing peer program (rg, pdftotext, …) and
    // the tests it skipped (__test__/peers.ts).
    reporters: ['default', './__test__/peer-summary.ts'],
  },
})
