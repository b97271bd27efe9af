// A dialog the page removes (rather than closes) loses the browser's own focus return: this puts
// focus back on the control that opened it, or on <main> when that control is gone (a revoked row).
import { useEffect, useState } from 'preact/hooks';

export function useReturnFocus(): void {
  // Read while rendering, before the dialog's showModal() moves focus into it.
  const [opener] = useState(() => document.activeElement as HTMLElement | null);
  useEffect(
    () => () => {
      setTimeout(() => (opener?.isConnected && opener !== document.body ? opener : document.getElementById('main'))?.focus());
    },
    [],
  );
}
