import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Build once; most suites then run Sesame in the test process (test/helpers/in-process.ts),
    // the rest drive real servers (child processes) over HTTP. Files run in parallel processes
    // bounded to the machine's two cores.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Each worker process runs file after file instead of starting afresh for every file: the
    // test libraries load once per worker, not once per file. Test files leave no process-wide
    // state behind (the in-process harness hands back the clock, log sink and framing policy;
    // environment changes are undone), so the order files share a worker in does not matter.
    isolate: false,
  },
});
