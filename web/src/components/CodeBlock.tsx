import { CopyButton } from './CopyButton';

/** Code to paste under a small bar naming it, with a Copy button. `tabIndex` lets keyboard users scroll it. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="code-block">
      <div className="code-head">
        <span>{label}</span>
        <CopyButton text={code} what={`${label} example`} className="code-copy" />
      </div>
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </div>
  );
}
