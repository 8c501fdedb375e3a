// An amount of money in the operator's currency, within the top-up bounds: typed in
// currency units, bounded and stepped by the currency's minor unit.
import type { ChangeEvent } from 'react';
import { TextField } from '../../components/TextField';
import { formatMoney } from '../../format';
import type { EnabledPayments } from '../../types';

interface MoneyFieldProps {
  label: string;
  name: string;
  payments: EnabledPayments;
  value: string;
  onChange(value: string): void;
  /** Defaults to the bounds, "From $5.00 to $500.00." */
  hint?: string;
  error?: string | undefined;
}

export function MoneyField({ label, name, payments, value, onChange, hint, error }: MoneyFieldProps) {
  const { currency, minorPerUnit, minMinor, maxMinor } = payments;
  return (
    <TextField
      label={`${label} (${currency.toUpperCase()})`}
      name={name}
      type="number"
      inputMode="decimal"
      min={minMinor / minorPerUnit}
      max={maxMinor / minorPerUnit}
      step={1 / minorPerUnit}
      required
      value={value}
      onChange={(event: ChangeEvent<HTMLInputElement>) => onChange(event.target.value)}
      hint={hint ?? `From ${formatMoney(minMinor, currency)} to ${formatMoney(maxMinor, currency)}.`}
      error={error}
    />
  );
}
