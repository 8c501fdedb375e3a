// The percentages of a budget that alert, as an organisation gives them ("50,80,100" or a
// list): whole numbers from 1 to 100 (admission never lets spending pass a budget, so a
// higher one could never fire), at most ten, kept in ascending order without repeats.
import { ValidationError } from '../errors.js';

export const MAX_BUDGET_THRESHOLDS = 10;

/** The thresholds, checked and ordered; ValidationError under `field` when they are not. */
export function parseBudgetThresholds(input: string | readonly number[], field = 'budget_thresholds'): number[] {
  const parts = typeof input === 'string' ? input.split(',').map((part) => part.trim().replace(/%$/, '')).filter((part) => part !== '') : input.map(String);
  const values = parts.map(Number);
  if (values.length === 0) throw new ValidationError({ [field]: ['Give at least one percentage, for example 50,80,100.'] });
  if (values.some((value) => !Number.isInteger(value) || value < 1 || value > 100)) throw new ValidationError({ [field]: ['Each threshold is a whole percentage from 1 to 100.'] });
  const unique = [...new Set(values)].sort((a, b) => a - b);
  if (unique.length > MAX_BUDGET_THRESHOLDS) throw new ValidationError({ [field]: [`At most ${MAX_BUDGET_THRESHOLDS} thresholds.`] });
  return unique;
}

/** Whether `spentMicros` reached `percent` % of `budgetMicros` (BigInt: the product may pass 2^53). */
export function hasReached(spentMicros: number, budgetMicros: number, percent: number): boolean {
  return BigInt(spentMicros) * 100n >= BigInt(budgetMicros) * BigInt(percent);
}

/** The calendar month (UTC) of a time, as budgets count it: `YYYY-MM`. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}
