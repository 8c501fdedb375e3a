import { useEffect, useState } from 'react';

interface CopyButtonProps {
  text: string;
  /** What is copied, for screen readers: "Copy API key". */
  what: string;
  className?: string;
  /** Take the focus when shown (the new key's dialog, whose form just went away). */
  autoFocus?: boolean;
}

export function CopyButton({ text, what, className = '', autoFocus = false }: CopyButtonProps) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(timer);
  }, [state]);

  return (
    <>
      <button
        type="button"
        autoFocus={autoFocus}
        className={`button small copy ${state === 'copied' ? 'is-copied' : ''} ${className}`}
        onClick={() => {
          copyText(text).then(
            () => setState('copied'),
            () => setState('failed'),
          );
        }}
      >
        {state === 'copied' ? 'Copied' : 'Copy'}
        <span className="visually-hidden"> {what}</span>
      </button>
      <span role="status" className="visually-hidden">
        {state === 'copied' ? `${what} copied to the clipboard.` : state === 'failed' ? `Could not copy the ${what}; select it and copy it by hand.` : ''}
      </span>
    </>
  );
}

/** The Clipboard API needs a secure context; plain HTTP beyond loopback falls back to execCommand. */
async function copyText(text: string): Promise<void> {
  if (window.isSecureContext && navigator.clipboard !== undefined) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('copy refused');
}
