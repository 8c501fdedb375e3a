// Shared mode: every instance learns what a model's servers count in a prompt from one
// window of reports (billing/prompt-calibration.ts), not only from the requests it served.
// Every SYNC_MS each instance appends the reports it observed to a Redis list per model
// and shape of prompt (trimmed to the window), and reloads the lists that changed, as a
// version counter beside each says. Off the request path, and nothing is lost but
// learning when Redis is away.
//
//   p:calib:<model>:<shape>     list  "counted,reported,forecast ratio,forecast excess", oldest first
//   p:calib:<model>:<shape>:v   string raised by every append
import type { Redis } from 'ioredis';
import { PROMPT_SHAPES, type PromptCalibration } from '../billing/prompt-calibration.js';
import type { ModelCatalog } from '../models/catalog.js';

const SYNC_MS = 2_000;
/** As many reports as one calibration's window. */
const KEPT = 512;

export class CalibrationSync {
  private timer: NodeJS.Timeout | undefined;
  /** The version each list had when this instance last loaded it. */
  private readonly loaded = new Map<string, string>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(catalog: ModelCatalog): void {
    this.share(catalog);
    this.timer = setInterval(() => {
      this.running ??= this.sync(catalog)
        .catch(this.onError)
        .finally(() => (this.running = undefined));
    }, SYNC_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Every model keeps the reports it observes for the next sync. */
  share(catalog: ModelCatalog): void {
    for (const model of catalog.list()) model.calibrations.share();
  }

  /** Appends this instance's new reports, then reloads every list another instance changed. */
  async sync(catalog: ModelCatalog): Promise<void> {
    const lists: { key: string; calibration: PromptCalibration }[] = [];
    const write = this.redis.pipeline();
    for (const model of catalog.list()) {
      for (const shape of PROMPT_SHAPES) {
        const calibration = model.calibrations.learned(shape);
        if (calibration === undefined) break;
        const key = `${this.prefix}:calib:${model.id}:${shape}`;
        lists.push({ key, calibration });
        const pending = calibration.takePending();
        if (pending.length === 0) continue;
        write.rpush(key, ...pending).ltrim(key, -KEPT, -1).incr(`${key}:v`);
      }
    }
    if (write.length > 0) await write.exec();
    if (lists.length === 0) return;
    const versions = await this.redis.mget(lists.map(({ key }) => `${key}:v`));
    const changed = lists.filter(({ key }, i) => versions[i] !== null && versions[i] !== this.loaded.get(key));
    if (changed.length === 0) return;
    const read = this.redis.pipeline();
    for (const { key } of changed) read.lrange(key, 0, -1);
    const results = (await read.exec()) ?? [];
    changed.forEach(({ key, calibration }, i) => {
      const [err, entries] = results[i] ?? [new Error('no reply')];
      if (err) return;
      calibration.load(entries as string[]);
      this.loaded.set(key, versions[lists.findIndex((list) => list.key === key)]!);
    });
  }
}
