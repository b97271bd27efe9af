// The Slack-compatible incoming-webhook body of an alert (Mattermost and Rocket.Chat accept the
// same). Slack rejects a whole message when one block breaks a limit, so limits are enforced here:
// header ≤ 150 characters, at most 10 fields of ≤ 2000 characters each. Data values are escaped
// (&, <, >) so a key name cannot become a link or an @channel mention.
import { describeEvent } from './alert-text.js';
import type { EventMessage } from './types.js';

const HEADER_MAX = 150;
const FIELD_MAX = 2000;
const FIELDS_MAX = 10;
const TEXT_MAX = 3000;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

export function escapeMrkdwn(value: string): string {
  return value.replace(/[&<>]/g, (char) => ENTITIES[char]!);
}

/** Cuts at a code point, never through a surrogate pair, ending with '…' when cut. */
export function truncate(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length <= max ? value : `${chars.slice(0, max - 1).join('')}…`;
}

/** Escapes, then cuts so the escaped text fits `max` without splitting an entity. */
function escapedWithin(value: string, max: number): string {
  if (Array.from(escapeMrkdwn(value)).length <= max) return escapeMrkdwn(value);
  let out = '';
  let length = 0;
  for (const char of value) {
    const piece = ENTITIES[char] ?? char;
    if (length + piece.length > max - 1) break;
    out += piece;
    length += piece.length;
  }
  return `${out}…`;
}

function field(label: string, value: string): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: escapedWithin(`*${label}*\n${value}`, FIELD_MAX) };
}

export function chatPayload(message: EventMessage, channel: string, username: string) {
  const { title, summary, facts, next } = describeEvent(message);
  const shown = facts.length <= FIELDS_MAX ? facts : facts.slice(0, FIELDS_MAX - 1);
  const fields = shown.map(([label, value]) => field(label, value));
  if (facts.length > FIELDS_MAX) {
    const rest = facts.slice(FIELDS_MAX - 1).map(([label, value]) => `${label}: ${value}`);
    fields.push(field('More', rest.join('\n')));
  }
  const blocks: Array<Record<string, unknown>> = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, HEADER_MAX), emoji: false } },
    { type: 'section', text: { type: 'mrkdwn', text: escapedWithin(summary, TEXT_MAX) } },
  ];
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  blocks.push({
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: escapedWithin(next, FIELD_MAX) },
      { type: 'mrkdwn', text: escapedWithin(`${message.type} · ${message.timestamp}`, FIELD_MAX) },
    ],
  });
  return { text: escapedWithin(`${title}: ${summary}`, TEXT_MAX), blocks, channel, username };
}
