// Vitest global setup: builds llama-server and writes the test model before any suite runs, so
// the first build (about 15 minutes on 2 cores; cached afterwards) never counts against a test
// hook's timeout. A failed build throws with the end of build.log and fails the run: the suites
// that need the server must not turn into skips.
import { prepareLlama } from '../helpers/llama-server.js';

export default async function setup(): Promise<void> {
  await prepareLlama();
}
