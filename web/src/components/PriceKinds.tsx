// The prices of a model's other token kinds, beneath its input and output prices, where
// they differ from them: cached input and cache writes (5-minute and 1-hour) beside the
// input price, reasoning beside the output price.
interface InputProps {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  cacheWrite1h: number;
  format: (price: number) => string;
}

export function InputPriceKinds({ input, cachedInput, cacheWrite, cacheWrite1h, format }: InputProps) {
  const parts: string[] = [];
  if (cachedInput !== input) parts.push(`cached ${format(cachedInput)}`);
  if (cacheWrite !== input) parts.push(`cache write ${format(cacheWrite)}`);
  if (cacheWrite1h !== cacheWrite) parts.push(`1-hour cache write ${format(cacheWrite1h)}`);
  return parts.length === 0 ? null : <div className="muted token-details">{parts.join(' · ')}</div>;
}

export function OutputPriceKinds({ output, reasoning, format }: { output: number; reasoning: number; format: (price: number) => string }) {
  return reasoning === output ? null : <div className="muted token-details">reasoning {format(reasoning)}</div>;
}
