import { describe, expect, it } from 'vitest';
import { PromptCalibration } from '../../src/billing/prompt-calibration.js';

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('PromptCalibration', () => {
  it('knows nothing at first: the estimate and the hold are lmgate’s own count', () => {
    const calibration = new PromptCalibration();
    expect(calibration.estimate(40)).toBe(40);
    expect(calibration.hold(40)).toBe(40);
  });

  it('learns a template’s constant overhead from one report of a repeated prompt', () => {
    const calibration = new PromptCalibration();
    calibration.observe(14, 345);
    expect(calibration.estimate(14)).toBe(345);
    expect(calibration.hold(14)).toBeGreaterThanOrEqual(345);
  });

  it('fits a tokenizer ratio and an overhead, and holds enough for 99 % of the prompts that follow', () => {
    // A server whose tokenizer writes 3.2× lmgate's tokens (±10 %), plus a 60-token template.
    const next = random(7);
    const server = (counted: number): number => Math.round(counted * 3.2 * (0.9 + 0.2 * next()) + 60);
    const calibration = new PromptCalibration();
    for (let i = 0; i < 100; i++) {
      const counted = 5 + Math.floor(next() * 300);
      calibration.observe(counted, server(counted));
    }
    let covered = 0;
    let estimateError = 0;
    const trials = 2_000;
    for (let i = 0; i < trials; i++) {
      const counted = 5 + Math.floor(next() * 300);
      const reported = server(counted);
      if (calibration.hold(counted) >= reported) covered++;
      estimateError += Math.abs(calibration.estimate(counted) - reported) / reported;
      calibration.observe(counted, reported);
    }
    expect(covered / trials).toBeGreaterThanOrEqual(0.98);
    // The estimate is central: a few per cent off on average, where the noise is ±10 %.
    expect(estimateError / trials).toBeLessThan(0.06);
  });

  it('follows a model that changes: old reports fall out of the window', () => {
    const calibration = new PromptCalibration();
    for (let i = 0; i < 600; i++) calibration.observe(10 + (i % 50), 2 * (10 + (i % 50)));
    expect(calibration.estimate(30)).toBe(60);
    for (let i = 0; i < 600; i++) calibration.observe(10 + (i % 50), 10 + (i % 50) + 100);
    expect(calibration.estimate(30)).toBe(130);
  });

  it('ignores reports that are not counts', () => {
    const calibration = new PromptCalibration();
    calibration.observe(Number.NaN, 5);
    calibration.observe(5, -1);
    expect(calibration.estimate(20)).toBe(20);
  });
});
