// The API traffic of `npm run bench:usage-scale`, in a process of its own so that the
// loader's work does not delay its clock: POST /v1/chat/completions to the demo echo model
// at a steady rate (open loop: a request starts on schedule whether or not the ones before
// answered, at most MAX_IN_FLIGHT at once), until SIGTERM; then one line of JSON on stdout
// with the requests, their rate and latency percentiles.
// Usage: node --import tsx bench/usage-scale-api-load.ts <lmgate url> <api key> <requests per second>
const MAX_IN_FLIGHT = 64;

export interface ApiLoadFigures {
  requests: number;
  errors: number;
  /** Requests skipped because MAX_IN_FLIGHT were waiting: the server fell behind. */
  skipped: number;
  requestsPerSec: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

async function main(): Promise<void> {
  const [url, apiKey, rate] = process.argv.slice(2);
  const perSec = Number(rate);
  if (!url || !apiKey || !(perSec > 0)) throw new Error('usage: usage-scale-api-load.ts <url> <api key> <requests per second>');
  const body = JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'Repeat this sentence back to me, word for word, please.' }], max_tokens: 32 });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const latenciesMs: number[] = [];
  let errors = 0;
  let skipped = 0;
  let inFlight = 0;
  const startedMs = performance.now();
  let sent = 0;

  const fire = async (): Promise<void> => {
    inFlight++;
    const at = performance.now();
    try {
      const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body });
      await response.arrayBuffer();
      if (response.status === 200) latenciesMs.push(performance.now() - at);
      else errors++;
    } catch {
      errors++;
    } finally {
      inFlight--;
    }
  };
  // Ticks every 10 ms and sends what the schedule owes, so the rate holds beyond 100/s.
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - startedMs) / 1000) * perSec);
    for (; sent < due; sent++) {
      if (inFlight >= MAX_IN_FLIGHT) skipped++;
      else void fire();
    }
  }, 10);

  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  clearInterval(ticker);
  const seconds = (performance.now() - startedMs) / 1000;
  const sorted = latenciesMs.sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const figures: ApiLoadFigures = { requests: sorted.length, errors, skipped, requestsPerSec: sorted.length / seconds, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99) };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
}

if (process.argv[1]?.endsWith('usage-scale-api-load.ts')) await main();
