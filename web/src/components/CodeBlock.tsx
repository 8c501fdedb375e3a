import { CopyButton } from './CopyButton';

/** Code to paste, scrollable, with a Copy button. `tabIndex` lets keyboard users scroll it. */
export function CodeBlock({ code, what }: { code: string; what: string }) {
  return (
    <div className="code-block">
      <pre tabIndex={0} aria-label={what}>
        <code>{code}</code>
      </pre>
      <CopyButton text={code} what={what} className="code-copy" />
    </div>
  );
}
