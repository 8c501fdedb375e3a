// Instances learn a model's prompt correction together: what one observed reaches the
// others' estimates and holds through Redis (one window of reports per model and shape).
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ModelCatalog } from '../../src/models/catalog.js';
import { CalibrationSync } from '../../src/shared/calibration-sync.js';
import { testRedis } from '../helpers/redis.js';

const redis = testRedis();
afterAll(() => redis.cleanup());

function instance(): { catalog: ModelCatalog; sync: CalibrationSync } {
  const config = loadConfig({
    env: {},
    cwd: '/nonexistent',
    overrides: { models: { up: { deployments: [{ url: 'http://127.0.0.1:9/v1', model: 'm' }] }, 'demo-echo': { backend: 'demo', kind: 'echo' } } },
  });
  const errors: unknown[] = [];
  return { catalog: new ModelCatalog(config), sync: new CalibrationSync(redis.connect(), redis.prefix, (err) => errors.push(err)) };
}

describe('prompt calibrations in shared mode', () => {
  it('one instance’s reports reach another’s estimate and hold; a demo model shares nothing', async () => {
    const [a, b] = [instance(), instance()];
    for (const { catalog, sync } of [a, b]) sync.share(catalog);
    const learnedByA = a.catalog.resolve('up').calibrations.of('chat+tools');
    // A server that adds a 300-token tool preamble to a prompt three times lmgate's count.
    for (let counted = 10; counted < 60; counted++) learnedByA.observe(counted, 3 * counted + 300);
    const onB = b.catalog.resolve('up').calibrations.of('chat+tools');
    expect(onB.estimate(40)).toBe(40);

    await a.sync.sync(a.catalog);
    await b.sync.sync(b.catalog);
    expect(onB.estimate(40)).toBe(420);
    expect(onB.hold(40)).toBe(learnedByA.hold(40));
    // Another shape learns nothing from it.
    expect(b.catalog.resolve('up').calibrations.of('chat').estimate(40)).toBe(40);

    // B's own reports join the window, and A learns them back.
    for (let counted = 100; counted < 110; counted++) onB.observe(counted, 3 * counted + 300);
    await b.sync.sync(b.catalog);
    await a.sync.sync(a.catalog);
    expect(learnedByA.estimate(105)).toBe(615);
    const listed = await redis.connect().llen(`${redis.prefix}:calib:up:chat+tools`);
    expect(listed).toBe(60);
    expect(await redis.connect().exists(`${redis.prefix}:calib:demo-echo:chat`)).toBe(0);
  });
});
