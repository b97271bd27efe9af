// At most one message per interval to each chat webhook URL from this process: Slack allows about
// one message per second per incoming webhook and answers 429 beyond that, so a burst of alerts
// queues here instead. Sends to one URL run one after another, in arrival order. The table is
// bounded: only idle URLs are forgotten, and a forgotten URL simply starts fresh.
const MAX_URLS = 256;

interface Lane {
  tail: Promise<void>;
  lastStart: number;
  pending: number;
}

const lanes = new Map<string, Lane>();

function forgetIdleLanes(): void {
  for (const [url, lane] of lanes) {
    if (lanes.size < MAX_URLS) return;
    if (lane.pending === 0) lanes.delete(url);
  }
}

function laneFor(url: string): Lane {
  let lane = lanes.get(url);
  if (!lane) {
    forgetIdleLanes();
    lane = { tail: Promise.resolve(), lastStart: -Infinity, pending: 0 };
    lanes.set(url, lane);
  }
  return lane;
}

/** Runs `work` once every earlier send to `url` finished and `intervalMs` passed since the last one started. */
export async function paced<T>(url: string, intervalMs: number, work: () => Promise<T>): Promise<T> {
  const lane = laneFor(url);
  const previous = lane.tail;
  let release!: () => void;
  lane.tail = new Promise((resolve) => (release = resolve));
  lane.pending++;
  try {
    await previous;
    const wait = lane.lastStart + intervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    lane.lastStart = Date.now();
    return await work();
  } finally {
    lane.pending--;
    release();
  }
}

/** How many URLs the table holds, for tests of its bound. */
export function pacedUrlCount(): number {
  return lanes.size;
}
