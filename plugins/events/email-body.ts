// The e-mail an alert becomes: the same description as chat, as plain text and as HTML. Every
// value in the HTML is escaped — event data holds user-chosen strings (key names, provider error
// messages) and must never become markup in an operator's mail client.
import type { EventMessage } from './types.js';
import type { EventDescription } from './alert-text.js';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export function plainBody(message: EventMessage, description: EventDescription): string {
  const width = Math.max(0, ...description.facts.map(([label]) => label.length));
  return [
    description.summary,
    '',
    ...description.facts.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${value}`),
    '',
    `Next: ${description.next}`,
    '',
    `Event: ${message.type} at ${message.timestamp}`,
    '',
  ].join('\n');
}

export function htmlBody(message: EventMessage, description: EventDescription): string {
  const rows = description.facts
    .map(([label, value]) => `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
    .join('\n');
  return [
    '<!doctype html>',
    '<html><body style="font-family:sans-serif">',
    `<h2>${escapeHtml(description.title)}</h2>`,
    `<p>${escapeHtml(description.summary)}</p>`,
    rows ? `<table>\n${rows}\n</table>` : '',
    `<p><strong>Next:</strong> ${escapeHtml(description.next)}</p>`,
    `<p style="color:#666;font-size:small">Event ${escapeHtml(message.type)} at ${escapeHtml(String(message.timestamp))}</p>`,
    '</body></html>',
    '',
  ].join('\n');
}
