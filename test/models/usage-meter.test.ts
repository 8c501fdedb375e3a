import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/models/tokens.js';
import { UsageMeter } from '../../src/models/upstream/usage-meter.js';

const TEXT = 'The quick brown fox jumps over the lazy dog, twice over.';

describe('UsageMeter', () => {
  it('bills the upstream’s report as it is, and says nothing was counted', () => {
    const meter = new UsageMeter({ promptTokens: 5 });
    meter.text(0, TEXT);
    meter.finish(0, 'stop');
    meter.report({ promptTokens: 345, completionTokens: 12, cachedTokens: 40 });
    meter.text(0, 'text after the report is not counted');
    expect(meter.usage()).toEqual({ promptTokens: 345, completionTokens: 12, cachedTokens: 40 });
    expect(meter.finishReason).toBe('stop');
    expect(meter.isReported).toBe(true);
  });

  it('without a report, counts what each choice delivered, a choice cut at the ceiling as the ceiling', () => {
    const meter = new UsageMeter({ promptTokens: 7, maxTokens: 64 });
    meter.text(0, TEXT);
    meter.text(0, TEXT);
    meter.text(1, 'short');
    meter.finish(0, 'stop');
    meter.finish(1, 'length');
    expect(meter.usage()).toEqual({ promptTokens: 7, completionTokens: countTextTokens(TEXT + TEXT) + 64, basis: 'counted' });
    expect(meter.finishReason).toBe('stop');
  });

  it('sums reports made choice by choice, the prompt once, and counts the choices none reported', () => {
    const meter = new UsageMeter({ promptTokens: 3, maxTokens: 10, perChoiceReports: true });
    for (const choice of [0, 1, 2]) meter.text(choice, TEXT);
    meter.finish(1, 'length');
    meter.report({ promptTokens: 300, completionTokens: 10, reasoningTokens: 2 });
    meter.finish(0, 'stop');
    meter.report({ promptTokens: 300, completionTokens: 9, reasoningTokens: 1 });
    expect(meter.isReported).toBe(false);
    // Choice 2 never reported (the stream was cut): lmgate's count of its text, and the basis says so.
    expect(meter.usage()).toEqual({ promptTokens: 300, completionTokens: 19 + countTextTokens(TEXT), reasoningTokens: 3, basis: 'counted' });
    meter.finish(2, 'stop');
    meter.report({ promptTokens: 300, completionTokens: 4 });
    expect(meter.usage()).toEqual({ promptTokens: 300, completionTokens: 23, reasoningTokens: 3 });
  });

  it('takes one report for several choices unless it covers less output than they wrote (llama.cpp reports one choice’s)', () => {
    const covering = new UsageMeter({ promptTokens: 3, maxTokens: 8 });
    for (const choice of [0, 1]) covering.finish(choice, 'length');
    covering.report({ promptTokens: 50, completionTokens: 16 });
    expect(covering.usage()).toEqual({ promptTokens: 50, completionTokens: 16 });

    const short = new UsageMeter({ promptTokens: 3, maxTokens: 8 });
    for (const choice of [0, 1, 2]) short.finish(choice, 'length');
    short.report({ promptTokens: 50, completionTokens: 8, cachedTokens: 10 });
    expect(short.usage()).toEqual({ promptTokens: 50, completionTokens: 24, cachedTokens: 10, basis: 'counted' });
  });

  it('puts an input reported first together with an output reported at the end; cut before the end, counts the output', () => {
    const whole = new UsageMeter({ promptTokens: 9 });
    whole.reportInput({ promptTokens: 1_511, completionTokens: 1, cachedTokens: 1_000 });
    whole.text(0, TEXT);
    whole.reportInput({ promptTokens: 1_512, completionTokens: 0, cachedTokens: 1_000 });
    whole.reportOutput(37);
    expect(whole.usage()).toEqual({ promptTokens: 1_512, completionTokens: 37, cachedTokens: 1_000 });

    const cut = new UsageMeter({ promptTokens: 9 });
    cut.reportInput({ promptTokens: 1_511, completionTokens: 1 });
    cut.text(0, TEXT);
    expect(cut.usage()).toEqual({ promptTokens: 1_511, completionTokens: countTextTokens(TEXT), basis: 'counted' });

    const nothing = new UsageMeter({ promptTokens: 9 });
    expect(nothing.usage()).toEqual({ promptTokens: 9, completionTokens: 0, basis: 'counted' });
    expect(nothing.hasFinished).toBe(false);
  });
});
