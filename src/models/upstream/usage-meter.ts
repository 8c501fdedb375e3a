// One call's usage, from the typed events of its answer, whatever the provider: the text
// each choice delivered, each choice's finish, and what the upstream reported. The report
// is the bill; lmgate's count stands in only for what no report covers (an upstream that
// reports nothing, a stream cut short, llama.cpp's one-choice report for `n` > 1), and
// then the usage says it was counted. Every upstream exchange meters through one of these.
import type { Usage } from '../../billing/usage.js';
import { DeliveredText } from './delivered-text.js';

export interface MeterOptions {
  /** lmgate's count of the prompt, for when the upstream reports none. */
  promptTokens: number;
  /** The output ceiling per choice: a choice that finished at `length` wrote exactly that many tokens. */
  maxTokens?: number | undefined;
  /**
   * Reports come choice by choice, each after its choice's finish (llama.cpp streaming
   * `n` > 1): summed, the prompt once.
   */
  perChoiceReports?: boolean;
}

export class UsageMeter {
  /** The upstream's report (summed over choices when they report one by one). */
  private reported: Usage | null = null;
  /** The input side reported ahead of the output (Anthropic's message_start); completionTokens 0. */
  private reportedInput: Usage | null = null;
  /** The output count reported apart from the input (Anthropic's message_delta). */
  private reportedOutput: number | null = null;
  /** Delivered text per choice not covered by a report. */
  private readonly texts = new Map<number, DeliveredText>();
  /** Choices that finished at `length` (counted as the ceiling). */
  private readonly cutAtCeiling = new Set<number>();
  private lastFinished: number | null = null;
  /** The highest choice index seen: above 0, the answer has several choices. */
  private highestChoice = 0;
  /** The first choice's finish reason, the answer's. */
  finishReason: string | null = null;
  /** Some choice has finished. */
  hasFinished = false;

  constructor(private readonly options: MeterOptions) {}

  /** The upstream has sent a report of its usage (report()). */
  get hasReport(): boolean {
    return this.reported !== null;
  }

  /** The upstream has reported both sides: nothing delivered from here on needs counting. */
  get isReported(): boolean {
    return (this.reported !== null && !this.options.perChoiceReports) || (this.reportedInput !== null && this.reportedOutput !== null);
  }

  /** Text a choice delivered: content, refusal, reasoning, tool calls. */
  text(choice: number, text: string): void {
    if (text.length === 0 || this.isReported) return;
    if (choice > this.highestChoice) this.highestChoice = choice;
    let delivered = this.texts.get(choice);
    if (delivered === undefined) this.texts.set(choice, (delivered = new DeliveredText()));
    delivered.add(text);
  }

  /** A choice finished; the answer's finish reason is the first choice's. */
  finish(choice: number, reason: string): void {
    this.hasFinished = true;
    this.lastFinished = choice;
    if (choice > this.highestChoice) this.highestChoice = choice;
    if (reason === 'length') this.cutAtCeiling.add(choice);
    if (choice === 0) this.finishReason = reason;
  }

  /**
   * The upstream's usage: of the whole answer, or (perChoiceReports) of the choice that
   * finished last. A whole report for several choices is taken unless it covers less
   * output than lmgate counts they wrote (llama.cpp reports one choice's).
   */
  report(usage: Usage): void {
    if (this.options.perChoiceReports) {
      this.reported = this.reported === null ? usage : withOutputOf(this.reported, usage);
      if (this.lastFinished !== null) this.forget(this.lastFinished);
      return;
    }
    this.reported = usage;
    if (this.highestChoice === 0) this.forgetAll();
  }

  /** The input side, reported before the output (its completionTokens ignored). A later report replaces it. */
  reportInput(input: Usage): void {
    this.reportedInput = { ...input, completionTokens: 0 };
  }

  /** The output count, reported apart from the input. */
  reportOutput(tokens: number): void {
    this.reportedOutput = tokens;
    if (this.reportedInput !== null) this.forgetAll();
  }

  /** The usage so far: reported where the upstream said, counted where it did not. */
  usage(): Usage {
    const counted = this.countedOutput();
    if (this.reported !== null) {
      if (counted.choices === 0) return this.reported;
      if (this.options.perChoiceReports) return { ...this.reported, completionTokens: this.reported.completionTokens + counted.tokens, basis: 'counted' };
      // One report for several choices.
      if (counted.tokens <= this.reported.completionTokens) return this.reported;
      return { ...this.reported, completionTokens: counted.tokens, basis: 'counted' };
    }
    const input = this.reportedInput ?? { promptTokens: this.options.promptTokens, completionTokens: 0 };
    if (this.reportedInput !== null && this.reportedOutput !== null) return { ...input, completionTokens: this.reportedOutput };
    return { ...input, completionTokens: counted.tokens, basis: 'counted' };
  }

  /** lmgate's count of the output no report covers: a choice cut at the ceiling wrote exactly that; any other is tokenized. */
  private countedOutput(): { tokens: number; choices: number } {
    if (this.texts.size === 0 && this.cutAtCeiling.size === 0) return { tokens: 0, choices: 0 };
    const { maxTokens } = this.options;
    let tokens = 0;
    const choices = new Set([...this.texts.keys(), ...this.cutAtCeiling]);
    for (const choice of choices) {
      if (maxTokens !== undefined && this.cutAtCeiling.has(choice)) tokens += maxTokens;
      else tokens += this.texts.get(choice)?.tokens() ?? 0;
    }
    return { tokens, choices: choices.size };
  }

  private forget(choice: number): void {
    this.texts.delete(choice);
    this.cutAtCeiling.delete(choice);
  }

  private forgetAll(): void {
    this.texts.clear();
    this.cutAtCeiling.clear();
  }
}

/** A usage so far with another choice's output added: the prompt is the same one. */
function withOutputOf(total: Usage, choice: Usage): Usage {
  const reasoningTokens = (total.reasoningTokens ?? 0) + (choice.reasoningTokens ?? 0);
  return { ...total, completionTokens: total.completionTokens + choice.completionTokens, ...(reasoningTokens > 0 ? { reasoningTokens } : {}) };
}
