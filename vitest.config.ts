import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds llama.cpp's llama-server once per machine (cached outside the clone) and writes
    // the tiny model the real-server suites run against.
    globalSetup: ['test/llama/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
