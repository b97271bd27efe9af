// Reads the gateway's /metrics the way Prometheus does: the text exposition parsed into samples, so
// tests assert exact values and label sets of a family.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[],
  ) {}

  /** Every sample of `name` (a series name: `x_total`, `x_bucket`, `x_count`). */
  series(name: string): Sample[] {
    return this.samples.filter((sample) => sample.name === name);
  }

  /** The value of the one sample of `name` whose labels are exactly `labels`; undefined when absent. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const wanted = JSON.stringify(sorted(labels));
    return this.series(name).find((sample) => JSON.stringify(sorted(sample.labels)) === wanted)?.value;
  }
}

function sorted(labels: Record<string, string>): Array<[string, string]> {
  return Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
}

const LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = value!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** GET /metrics of the gateway whose API is at `apiUrl` (…/v1). */
export async function scrape(apiUrl: string, token?: string): Promise<Scrape> {
  const response = await fetch(`${apiUrl.replace(/\/v1$/, '')}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`);
  return new Scrape(text, parseExposition(text));
}
