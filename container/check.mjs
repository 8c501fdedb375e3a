// The checks container/ci.sh runs against lmgate's image and compose.yaml, with the official
// `openai` client as the API client (maxRetries 0: a retry would hide a refusal). One
// scenario per run, named by the first argument; each prints what it saw and exits non-zero
// at the first thing that is not as the README says.
//
//   quickstart   BASE_URL, API_KEY (the demo key from the log): the README's Quick start
//   stop         BASE_URL, API_KEY, CONTAINER, PODMAN: SIGTERM during a stream; the stream
//                finishes (or ends cut), the container exits 0, and after a restart on the
//                same volume the balance moved by exactly what the stream reported
//   compose      PROXY_URL, INSTANCE_URLS (comma-separated), ADMIN_KEY: shared mode
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';

const run = promisify(execFile);
const env = process.env;

function must(name) {
  const value = env[name];
  if (!value) fail(`${name} is not set`);
  return value;
}

function fail(message) {
  console.error(`check: FAILED: ${message}`);
  process.exit(1);
}

function expect(condition, message) {
  if (!condition) fail(message);
  console.log(`check: ok: ${message}`);
}

function client(baseURL, apiKey) {
  return new OpenAI({ baseURL: `${baseURL}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
}

/** Credits as the API writes them (usage.cost) to integer micro-credits. */
function micros(credits) {
  return Math.round(credits * 1_000_000);
}

async function waitFor(what, deadlineMs, probe) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not answering yet
    }
    if (Date.now() > until) fail(`${what}: not within ${deadlineMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function balanceOf(baseURL, apiKey) {
  const res = await fetch(`${baseURL}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
  if (res.status !== 200) fail(`GET ${baseURL}/api/billing/subscription answered ${res.status}`);
  const body = await res.json();
  return { balanceMicros: body.balance.micros, reservedMicros: body.reserved.micros };
}

async function chat(api, model = 'demo-echo', content = 'Hello!') {
  const completion = await api.chat.completions.create({ model, max_tokens: 20, messages: [{ role: 'user', content }] });
  return { text: completion.choices[0].message.content ?? '', costMicros: micros(completion.usage.cost) };
}

async function quickstart() {
  const base = must('BASE_URL');
  const api = client(base, must('API_KEY'));

  const health = await fetch(`${base}/healthz`);
  expect(health.status === 200, `GET /healthz answers 200 (${health.status})`);

  const hello = await chat(api);
  expect(hello.text.includes('Hello!'), `a chat completion with the demo key answers (demo-echo: ${JSON.stringify(hello.text)})`);

  const stream = await api.chat.completions.create({
    model: 'demo-lorem',
    max_tokens: 40,
    stream: true,
    messages: [{ role: 'user', content: 'Tell me something.' }],
  });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
  expect(streamed.length > 0, `a streamed completion arrives (${streamed.length} characters)`);

  const models = await api.models.list();
  expect(models.data.some((m) => m.id === 'demo-echo'), 'GET /v1/models lists the demo models');

  const page = await fetch(`${base}/`);
  const html = await page.text();
  expect(
    page.status === 200 && (page.headers.get('content-type') ?? '').startsWith('text/html') && /<div id="root"/.test(html),
    `the dashboard's first page answers 200 with HTML (${page.status}, ${page.headers.get('content-type')})`,
  );
}

async function stopDuringStream() {
  const base = must('BASE_URL');
  const apiKey = must('API_KEY');
  const container = must('CONTAINER');
  const podman = must('PODMAN');
  const api = client(base, apiKey);

  const before = await balanceOf(base, apiKey);
  // demo-lorem writes 80 tokens a second: 240 take 3 s, inside the image's 8 s drain.
  const stream = await api.chat.completions.create({
    model: 'demo-lorem',
    max_tokens: 240,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Tell me a long story.' }],
  });
  let signalled = false;
  let costMicros;
  let chunks = 0;
  let outcome = 'finished';
  try {
    for await (const chunk of stream) {
      chunks += 1;
      if (chunk.usage) costMicros = micros(chunk.usage.cost);
      if (!signalled && chunk.choices[0]?.delta?.content) {
        signalled = true;
        await run(podman, ['kill', '--signal', 'TERM', container]);
        console.log(`check: SIGTERM sent to ${container} after the first chunk`);
      }
    }
  } catch (err) {
    outcome = `cut (${err.message})`;
  }
  expect(signalled, 'the stream started before the signal');
  console.log(`check: the stream ${outcome} after ${chunks} chunks`);

  const { stdout: exitCode } = await run(podman, ['wait', container]);
  expect(['0', '143'].includes(exitCode.trim()), `the container exits cleanly after the drain (exit code ${exitCode.trim()})`);
  const { stdout: log } = await run(podman, ['logs', container]);
  expect(log.includes('lmgate shutting down'), 'the log says it shut down');

  await run(podman, ['start', container]);
  await waitFor('ready again after a restart', 30_000, async () => (await fetch(`${base}/readyz`)).status === 200);
  const { stdout: logs } = await run(podman, ['logs', container]);
  const count = (text) => logs.split(text).length - 1;
  expect(
    count('lmgate listening on') === 2 && count('created with this API key') === 1,
    'the restart on the same volume keeps the store (two starts, one demo key)',
  );

  const after = await balanceOf(base, apiKey);
  expect(after.reservedMicros === 0, `nothing stays reserved (${after.reservedMicros})`);
  if (outcome === 'finished') {
    expect(costMicros !== undefined, 'the finished stream carried its usage chunk');
    expect(
      before.balanceMicros - after.balanceMicros === costMicros,
      `the balance moved by exactly the stream's cost (${before.balanceMicros} - ${after.balanceMicros} = ${costMicros})`,
    );
  } else {
    expect(after.balanceMicros < before.balanceMicros, `the cut stream was charged for what it delivered (${before.balanceMicros} → ${after.balanceMicros})`);
  }
}

async function compose() {
  const proxy = must('PROXY_URL');
  const instances = must('INSTANCE_URLS').split(',');
  const adminKey = must('ADMIN_KEY');
  const bases = [proxy, ...instances];

  for (const base of bases) {
    await waitFor(`${base}/readyz`, 120_000, async () => (await fetch(`${base}/readyz`)).status === 200);
  }
  console.log(`check: ok: /readyz answers 200 through the proxy and on each instance`);

  const admin = async (base, method, path, body) => {
    const res = await fetch(`${base}/api/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status >= 300) fail(`${method} ${base}/api/admin/v1${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };

  const startMicros = 2_000_000;
  const { account } = await admin(instances[0], 'POST', '/accounts', { email: `ci-${Date.now()}@example.com`, credits_micros: startMicros });
  const spend = (await admin(instances[1], 'POST', `/accounts/${account.id}/keys`, { name: 'spend' })).secret;
  const doomed = await admin(instances[0], 'POST', `/accounts/${account.id}/keys`, { name: 'doomed' });
  let spentMicros = 0;

  for (const base of bases) {
    const { text, costMicros } = await chat(client(base, spend));
    expect(text.includes('Hello!'), `a request through ${base} is answered`);
    spentMicros += costMicros;
  }

  // Used on the second instance first, so that it holds the key in its cache.
  spentMicros += (await chat(client(instances[1], doomed.secret))).costMicros;
  await admin(instances[0], 'POST', `/keys/${doomed.key.id}/revoke`);
  let refusal;
  await waitFor('the revocation reaching the other instance', 2_000, async () => {
    const res = await fetch(`${instances[1]}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${doomed.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'Hello!' }] }),
    });
    const body = await res.json();
    // Answered before the revocation arrived: charged like any other.
    if (res.status === 200) spentMicros += micros(body.usage.cost);
    refusal = { status: res.status, code: body.error?.code };
    return res.status === 401;
  });
  expect(refusal.code === 'key_revoked', `a key revoked on one instance is refused on the other (${refusal.status} ${refusal.code})`);

  // The free tier allows 4 requests at once: rounds of 4, spread over both instances.
  const rounds = 6;
  for (let round = 0; round < rounds; round++) {
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) => chat(client(instances[i % 2], spend), 'demo-lorem', `round ${round}, request ${i}`)),
    );
    for (const { costMicros } of answers) spentMicros += costMicros;
  }
  for (const base of instances) {
    const { balanceMicros, reservedMicros } = await balanceOf(base, spend);
    expect(
      balanceMicros === startMicros - spentMicros && reservedMicros === 0,
      `the balance seen on ${base} is exactly the start less every answer's cost (${startMicros} - ${spentMicros} = ${balanceMicros}, reserved ${reservedMicros})`,
    );
  }
  const stored = await admin(instances[1], 'GET', `/accounts/${account.id}`);
  expect(stored.account.balance_micros === startMicros - spentMicros, `the admin API agrees (${stored.account.balance_micros})`);
}

const scenarios = { quickstart, stop: stopDuringStream, compose };
const scenario = scenarios[process.argv[2]];
if (!scenario) fail(`usage: node container/check.mjs ${Object.keys(scenarios).join('|')}`);
await scenario();
