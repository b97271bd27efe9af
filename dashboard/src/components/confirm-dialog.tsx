// "Are you sure?" for a change that cannot be undone from here: names what it acts on, and shows the
// API's refusal inside the dialog so the admin sees why nothing happened.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog, ErrorNotice } from './ui.js';
import { useReturnFocus } from './return-focus.js';

export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  useReturnFocus();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog title={props.title} open onClose={props.onClose}>
      {props.children}
      <ErrorNotice error={error} />
      <div class="actions dialog-actions">
        <button
          type="button"
          class={props.danger ? 'danger' : undefined}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setError(null);
            try {
              await props.onConfirm();
            } catch (caught) {
              setError(caught);
              setBusy(false);
            }
          }}
        >
          {props.confirmLabel}
        </button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
