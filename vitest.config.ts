import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Builds llama.cpp's llama-server once per machine (cached outside the clone) and writes
    // the tiny model the real-server suites run against.
    globalSetup: ['test/llama/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'embedded', include: ['test/**/*.test.ts'] } },
      // The API suites again with every app in shared mode (PostgreSQL and Redis): one
      // contract, headers and bodies included, in both modes.
      { extends: true, test: { name: 'shared', include: ['test/api/**/*.test.ts'], env: { LMGATE_TEST_MODE: 'shared' } } },
    ],
  },
});
