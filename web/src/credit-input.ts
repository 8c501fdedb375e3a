// Credits as people type them ("2.5", "-1") ↔ integer micro-credits, exactly: the digits
// are read and written as text, never through a float. The console's amounts and a key's
// credit limit are typed this way.

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

/** The text that reads back as `micros` (a positive amount): "25", "0.5", "1234.000001". */
export function microsToCreditsInput(micros: number): string {
  const fraction = String(micros % 1_000_000).padStart(6, '0').replace(/0+$/, '');
  return `${Math.floor(micros / 1_000_000)}${fraction === '' ? '' : `.${fraction}`}`;
}
