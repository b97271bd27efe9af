// A labelled control whose hint is its description, not part of its name: ui.tsx's Field puts the
// hint inside the <label>, so "Expires" would be named "Expires At 00:00 UTC…" and getByLabel('Expires',
// { exact: true }) would miss it. Here the label holds only the control and its text.
import { cloneElement, isValidElement, type ComponentChildren, type VNode } from 'preact';
import { useId } from 'preact/hooks';

export function FormField({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  const id = useId();
  const control = hint && isValidElement(children) ? cloneElement(children as VNode<Record<string, unknown>>, { 'aria-describedby': id }) : children;
  return (
    <div class="field">
      <label class="field-label">
        <span class="label">{label}</span>
        {control}
      </label>
      {hint && (
        <span class="hint" id={id}>
          {hint}
        </span>
      )}
    </div>
  );
}
