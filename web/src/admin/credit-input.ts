// Credits as an operator types them ("2.5", "-1") → integer micro-credits, exactly: the
// digits are read as text, never through a float.

/** null when the text is not an amount of credits with at most 6 decimals. */
export function creditsInputToMicros(text: string, options: { signed: boolean }): number | null {
  const match = /^([+-]?)(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match as unknown as [string, string, string, string | undefined];
  if (sign === '-' && !options.signed) return null;
  const micros = Number(whole) * 1_000_000 + Number(fraction.padEnd(6, '0'));
  if (!Number.isSafeInteger(micros) || micros === 0) return null;
  return sign === '-' ? -micros : micros;
}
