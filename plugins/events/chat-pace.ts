// At most one message per interval to each chat webhook URL from this process: Slack allows about
// one message per second per incoming webhook and answers 429 beyond that, so a burst of alerts
// queues here instead. Sends to one URL run one after another, in arrival order. The table is
// bounded: a URL is forgotten only when nothing waits on it and its interval has passed, so
// forgetting never lets a message out early; beyond that the table holds only URLs in use.
const MAX_URLS = 256;

interface Lane {
  tail: Promise<void>;
  /** When the next send may start. */
  readyAt: number;
  pending: number;
}

const lanes = new Map<string, Lane>();

function forgetIdleLanes(): void {
  const now = Date.now();
  for (const [url, lane] of lanes) {
    if (lanes.size < MAX_URLS) return;
    if (lane.pending === 0 && lane.readyAt <= now) lanes.delete(url);
  }
}

function laneFor(url: string): Lane {
  let lane = lanes.get(url);
  if (!lane) {
    forgetIdleLanes();
    lane = { tail: Promise.resolve(), readyAt: 0, pending: 0 };
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
    const wait = lane.readyAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    lane.readyAt = Date.now() + intervalMs;
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
