// A secret the API shows this once (a new or regenerated key): a warning, the secret, a copy button
// that says whether it worked, and Done. The caller drops the secret from its state on close.
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { Dialog } from './ui.js';
import { useReturnFocus } from './return-focus.js';

export function SecretDialog({ title, secret, onClose, children }: { title: string; secret: string; onClose: () => void; children?: ComponentChildren }) {
  useReturnFocus();
  const [copied, setCopied] = useState('');
  const code = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied');
    } catch {
      // No clipboard (a page not served over TLS, or permission refused): select it for a manual copy.
      const range = document.createRange();
      if (code.current) range.selectNodeContents(code.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied('Copying was refused: the key is selected, copy it with Ctrl+C or ⌘C.');
    }
  };
  return (
    <Dialog title={title} open onClose={onClose}>
      <p class="notice">
        <strong>This is the only time the secret is shown. Store it now.</strong>
      </p>
      <div class="secret">
        <code ref={code}>{secret}</code>
        <button type="button" onClick={copy}>
          Copy key
        </button>
      </div>
      <p role="status" class="copied">
        {copied}
      </p>
      {children}
      <div class="actions dialog-actions">
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
