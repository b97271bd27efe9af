// CSV of a report's series (format=csv of the usage and costs reports): a header row, then one row
// per bucket × group. Fields are quoted when they hold a comma, a quote or a line break (RFC 4180),
// and a text field that a spreadsheet would read as a formula (starting with =, +, -, @, a tab or a
// carriage return: a model name is the client's to choose) is prefixed with a single quote.
import type { Measures } from './analytics-reports.js';

const FORMULA = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = String(value);
  if (FORMULA.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `rows` as CSV with `columns` as its header (CRLF line ends, as RFC 4180 writes them). */
export function toCsv(columns: readonly string[], rows: readonly Measures[]): string {
  const lines = [columns.map(csvField).join(',')];
  for (const row of rows) lines.push(columns.map((column) => csvField(row[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
