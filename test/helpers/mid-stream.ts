// A client that leaves a stream mid-way: it reads until the fakes' numbered words
// (` word0`, ` word1`...) have come, and then finds its usage once the server has settled it.
import type { UsageRecord } from '../../src/store/store.js';
import type { TestApp } from './start-app.js';

/** Reads a streamed answer until `count` words have come; the text read so far. */
export async function readWords(res: Response, count: number): Promise<string> {
  const reader = res.body!.getReader();
  let received = '';
  while ((received.match(/word/g) ?? []).length < count) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${received}`);
    received += new TextDecoder().decode(value);
  }
  return received;
}

/** The account's usage records, waiting for the first: a stream is settled once the server sees it end, which may be after the client does. */
export async function settledUsage(t: TestApp, accountId: string): Promise<UsageRecord[]> {
  await t.flushUsage();
  let records = await t.store.listUsage(accountId);
  for (let i = 0; i < 100 && records.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.flushUsage();
    records = await t.store.listUsage(accountId);
  }
  return records;
}
