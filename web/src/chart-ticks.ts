// A chart's value axis at round steps: 0, 1K, 2K, 3K rather than 0, 650, 1.3K, 1.95K.

/** Steps are 1, 2 or 5 times a power of ten; about this many fit the axis. */
const STEPS_WANTED = 4;

/**
 * Ticks from 0 to the first step at or above `max` (whole numbers: counts, tokens,
 * micro-credits). With nothing to scale to (`max` 0), the axis ends at `emptyMax`.
 */
export function niceTicks(max: number, emptyMax: number): number[] {
  const top = max > 0 ? max : emptyMax;
  const rough = top / STEPS_WANTED;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((multiple) => multiple * power).find((candidate) => candidate >= rough)!);
  const ticks = [0];
  while (ticks.at(-1)! < top) ticks.push(ticks.at(-1)! + step);
  return ticks;
}
