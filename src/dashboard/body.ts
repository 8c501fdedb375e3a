// Request bodies and query strings of the dashboard, checked with zod: one 422 entry per
// problem, named by its field.
import type { z } from 'zod';
import { ValidationError } from '../errors.js';

export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const fields: Record<string, string[]> = {};
  for (const issue of parsed.error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
    (fields[field] ??= []).push(issue.message);
  }
  throw new ValidationError(fields);
}
