// What a model's server really counts in a prompt, learned from what it reports.
//
// lmgate counts a prompt with its own tokenizer (o200k), text and tool schemas included.
// A model server counts with the model's tokenizer and also counts its chat template, the
// template's default system prompt and the way it renders tools, none of which lmgate can
// see. So each model keeps, per shape of prompt (PromptShape: a template adds a default
// system prompt only when there is none, and a preamble only when there are tools; a
// completion or an embedding has no chat template), a line fitted to (lmgate's count →
// the server's report) over its recent answers:
//   estimate = slope × counted + overhead
// and, for holds, how far above that line the reports have come, measured before each
// answer was fitted in (an honest forecast error): the 99th percentile of report ÷ estimate
// for long prompts, and of report − estimate in tokens for short ones, whose few tokens
// make any ratio jumpy; the hold takes the larger. Until there are 100 forecasts the
// percentile is not known: the largest seen stands in for it, with headroom for what a
// few have not shown (upperQuantile).
// One estimate answers count_tokens and bills an answer the server gave no usage for;
// the hold adds the margin, so it covers the true prompt in at least 99 % of requests.
// In shared mode the instances learn from one window of reports (shared/calibration-sync.ts).

/** Answers kept for the fit; older ones fall out, so a model that changes is relearned. */
const WINDOW = 512;
/** Reports fitted before a forecast's error is measured: the first few fits say little. */
const WARM_UP = 4;
/** The margin is recomputed this often once it rests on many forecasts (a sort of WINDOW numbers). */
const MARGIN_EVERY = 16;
const MARGIN_QUANTILE = 0.99;
/** Forecasts needed before the 99th percentile stands on its own. */
const QUANTILE_SAMPLE = 100;
/** A slope outside this range is a poor fit (few distinct lengths): the overhead alone is used. */
const MIN_SLOPE = 0.25;
const MAX_SLOPE = 8;

/** What a plan asks of a calibration. */
export interface PromptEstimator {
  /** The server's count for a prompt lmgate counted `counted` tokens, as best known. */
  estimate(counted: number): number;
  /** What to hold for such a prompt. */
  hold(counted: number): number;
  /** The server reported `reported` prompt tokens for a prompt lmgate counted `counted`. */
  observe(counted: number, reported: number): void;
}

/** A model whose prompt lmgate's count is (a demo model counts with lmgate's tokenizer): nothing to learn. */
const EXACT: PromptEstimator = { estimate: (counted) => counted, hold: (counted) => counted, observe: () => undefined };

export class PromptCalibration implements PromptEstimator {
  private readonly counted = new Float64Array(WINDOW);
  private readonly reported = new Float64Array(WINDOW);
  private readonly forecastRatios = new Float64Array(WINDOW);
  private readonly forecastExcess = new Float64Array(WINDOW);
  private size = 0;
  private next = 0;
  private sumC = 0;
  private sumR = 0;
  private sumCC = 0;
  private sumCR = 0;
  private slope = 1;
  private overhead = 0;
  private margin = 1;
  /** Tokens the reports came above the fit, at the same percentile. */
  private excessTokens = 0;
  private sinceMargin = 0;
  /** Reports for other instances, kept once shared (CalibrationSync); a lone process keeps none. */
  private pending: string[] | undefined;

  /** The server's count for a prompt lmgate counted `counted` tokens, as best known. */
  estimate(counted: number): number {
    if (this.size === 0) return counted;
    return Math.max(0, Math.round(this.slope * counted + this.overhead));
  }

  /** What to hold for such a prompt: the estimate and its margin, never below lmgate's own count. */
  hold(counted: number): number {
    if (this.size === 0) return counted;
    const fit = this.slope * counted + this.overhead;
    return Math.max(counted, Math.ceil(Math.max(this.margin * fit, fit + this.excessTokens)));
  }

  /** The server reported `reported` prompt tokens for a prompt lmgate counted `counted`. */
  observe(counted: number, reported: number): void {
    if (!(counted >= 0 && reported >= 0)) return;
    let ratio = Number.NaN;
    let excess = Number.NaN;
    if (this.size >= WARM_UP) {
      const forecast = Math.max(1, this.slope * counted + this.overhead);
      ratio = reported / forecast;
      excess = reported - forecast;
    }
    this.add(counted, reported, ratio, excess);
    if (this.pending !== undefined && this.pending.length < WINDOW) this.pending.push(`${counted},${reported},${ratio},${excess}`);
    this.fit();
    if (++this.sinceMargin >= MARGIN_EVERY || this.size <= WARM_UP + QUANTILE_SAMPLE) this.measureMargin();
  }

  /**
   * The reports observed here since the last call, as text, for other instances to learn
   * from (shared/calibration-sync.ts); at most a window's worth are kept.
   */
  takePending(): string[] {
    const taken = this.pending ?? [];
    if (this.pending !== undefined) this.pending = [];
    return taken;
  }

  /** From now on, keep the reports observed here for takePending. */
  keepReports(): void {
    this.pending ??= [];
  }

  /** Learns from these reports instead, oldest first (every instance's, in shared mode), as takePending wrote them. */
  load(entries: readonly string[]): void {
    this.size = this.next = this.sumC = this.sumR = this.sumCC = this.sumCR = 0;
    for (const entry of entries.slice(-WINDOW)) {
      const [counted, reported, ratio, excess] = entry.split(',').map(Number);
      if (counted! >= 0 && reported! >= 0) this.add(counted!, reported!, ratio!, excess!);
    }
    if (this.size === 0) return;
    this.fit();
    this.measureMargin();
  }

  private add(counted: number, reported: number, ratio: number, excess: number): void {
    this.forecastRatios[this.next] = ratio;
    this.forecastExcess[this.next] = excess;
    if (this.size === WINDOW) {
      const oldC = this.counted[this.next]!;
      const oldR = this.reported[this.next]!;
      this.sumC -= oldC;
      this.sumR -= oldR;
      this.sumCC -= oldC * oldC;
      this.sumCR -= oldC * oldR;
    } else {
      this.size++;
    }
    this.counted[this.next] = counted;
    this.reported[this.next] = reported;
    this.sumC += counted;
    this.sumR += reported;
    this.sumCC += counted * counted;
    this.sumCR += counted * reported;
    this.next = (this.next + 1) % WINDOW;
  }

  /** Least squares over the window; the overhead alone when the counts hardly vary. */
  private fit(): void {
    const n = this.size;
    const meanC = this.sumC / n;
    const meanR = this.sumR / n;
    const varC = this.sumCC / n - meanC * meanC;
    const slope = varC > 1 ? (this.sumCR / n - meanC * meanR) / varC : Number.NaN;
    if (slope >= MIN_SLOPE && slope <= MAX_SLOPE) {
      this.slope = slope;
      this.overhead = meanR - slope * meanC;
    } else {
      this.slope = 1;
      this.overhead = meanR - meanC;
    }
  }

  private measureMargin(): void {
    this.sinceMargin = 0;
    const ratios = upperQuantile(this.forecastRatios, this.size);
    if (ratios === undefined) {
      // No forecast yet: the largest ratio of a report to the fit itself, with the same headroom.
      let worst = 1;
      for (let i = 0; i < this.size; i++) worst = Math.max(worst, this.reported[i]! / Math.max(1, this.slope * this.counted[i]! + this.overhead));
      this.margin = worst * (1 + 1 / Math.sqrt(this.size));
      this.excessTokens = 0;
      return;
    }
    this.margin = Math.max(1, ratios);
    this.excessTokens = Math.max(0, upperQuantile(this.forecastExcess, this.size) ?? 0);
  }
}

/** The largest of the k values kept for the 99th percentile of a full window (the window's top 1 %). */
const TOP_KEPT = Math.ceil(WINDOW * (1 - MARGIN_QUANTILE)) + 1;

/**
 * The 99th percentile of the first `size` values (NaN: not measured), read in one pass
 * that keeps only the largest few: settlements run it, so it sorts nothing and allocates
 * little. Below QUANTILE_SAMPLE values it is not known: the largest stands in for it,
 * raised by the spread seen over √k for what a few have not shown. Undefined: none measured.
 */
function upperQuantile(values: Float64Array, size: number): number | undefined {
  const top: number[] = [];
  let count = 0;
  let smallest = Infinity;
  for (let i = 0; i < size; i++) {
    const value = values[i]!;
    if (Number.isNaN(value)) continue;
    count++;
    if (value < smallest) smallest = value;
    if (top.length < TOP_KEPT) top.push(value);
    else if (value > top[TOP_KEPT - 1]!) top[TOP_KEPT - 1] = value;
    else continue;
    // Keep `top` in descending order: move the new value up to its place.
    for (let j = top.length - 1; j > 0 && top[j]! > top[j - 1]!; j--) [top[j], top[j - 1]] = [top[j - 1]!, top[j]!];
  }
  if (count === 0) return undefined;
  if (count < QUANTILE_SAMPLE) return top[0]! + (top[0]! - smallest) / Math.sqrt(count);
  // The value with 1 % of the values above it.
  return top[Math.min(top.length - 1, count - Math.ceil(MARGIN_QUANTILE * count))]!;
}

/**
 * The shapes of prompt whose overheads differ: a chat with or without a system message,
 * with or without tools, and the endpoints that use no chat template.
 */
export const PROMPT_SHAPES = ['chat', 'chat+system', 'chat+tools', 'chat+system+tools', 'completions', 'embeddings', 'responses'] as const;
export type PromptShape = (typeof PROMPT_SHAPES)[number];

/** One model's calibrations, one per shape, made when first used; for a model that counts as lmgate does, none. */
export class PromptCalibrations {
  private readonly byShape = new Map<PromptShape, PromptCalibration>();

  private isShared = false;

  constructor(private readonly isExact = false) {}

  /** Every calibration of the model, now and to come, keeps its reports for other instances. */
  share(): void {
    this.isShared = true;
    for (const calibration of this.byShape.values()) calibration.keepReports();
  }

  /** The calibration of a shape, to learn into (shared mode); undefined for a model that counts as lmgate does. */
  learned(shape: PromptShape): PromptCalibration | undefined {
    if (this.isExact) return undefined;
    this.of(shape);
    return this.byShape.get(shape);
  }

  of(shape: PromptShape): PromptEstimator {
    if (this.isExact) return EXACT;
    let calibration = this.byShape.get(shape);
    if (calibration === undefined) {
      this.byShape.set(shape, (calibration = new PromptCalibration()));
      if (this.isShared) calibration.keepReports();
    }
    return calibration;
  }
}
