// Small shared pieces: loading and error states, empty states, a labelled field, a confirmation
// dialog, number formatting. Every control has a visible label; errors are announced (role=alert).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { ApiError } from '../api.js';

export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
    </label>
  );
}

/** A modal dialog (the native <dialog>: focus is kept inside, Escape closes it). */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-label={title} onClose={onClose} onCancel={onClose}>
      <h2>{title}</h2>
      {open && children}
    </dialog>
  );
}

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
const count = new Intl.NumberFormat('en-US');

export const formatUsd = (value: number | null | undefined) => (value === null || value === undefined ? '—' : usd.format(value));
export const formatCount = (value: number | null | undefined) => (value === null || value === undefined ? '—' : count.format(value));
export const formatPercent = (value: number | null | undefined, digits = 1) => (value === null || value === undefined ? '—' : `${(value * 100).toFixed(digits)}%`);
export const formatMs = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `${Math.round(value)} ms`);
export const formatDate = (value: string | number | null | undefined) => (value === null || value === undefined ? '—' : new Date(value).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' }));
