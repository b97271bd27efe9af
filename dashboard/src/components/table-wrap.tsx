// A table's scrolling frame: on a narrow screen the table scrolls inside it, so the frame is a named
// region that takes focus (keyboard users can scroll it; axe's scrollable-region-focusable).
import type { ComponentChildren } from 'preact';

export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
