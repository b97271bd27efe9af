// With MODELGATE_WORKERS above one, a scrape of /metrics reaches whichever worker took the
// connection. That worker asks the primary, which gathers every listening worker's metrics
// (prom-client's JSON form, over the cluster's IPC channel) and merges them — counters and
// histograms summed, gauges as each declares its `aggregator` — so Prometheus sees the gateway,
// not a different worker at each scrape. Counters never go down (Prometheus would read a reset):
// a worker that does not answer in time counts with the last metrics it sent, and the counters of a
// worker that exited stay in the sum. Scrapes that arrive while a gathering runs share its answer.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** worker → primary: a scrape arrived. */
const ASK = 'modelgate:metrics:ask';
/** primary → every worker: send yours. */
const GATHER = 'modelgate:metrics:gather';
/** worker → primary: mine. */
const PART = 'modelgate:metrics:part';
/** primary → the asking worker: everyone's, merged (Prometheus text). */
const MERGED = 'modelgate:metrics:merged';
/** A worker that has not answered by then (stuck, or exiting) is left out of that scrape. */
const GATHER_TIMEOUT_MS = 3_000;

interface Message {
  type?: string;
  id?: number;
  metrics?: unknown;
  text?: string;
}

/**
 * In a worker: reads the metrics of every worker, merged (and answers the primary's gathering with
 * `registry`'s). Elsewhere: undefined — the process's own registry is the whole gateway.
 */
export function workerMetrics(registry: Registry): (() => Promise<string>) | undefined {
  if (!cluster.isWorker) return undefined;
  let next = 0;
  const waiting = new Map<number, (text: string) => void>();
  process.on('message', (message: Message) => {
    if (message?.type === GATHER) {
      // A collector that fails sends nothing new: the primary counts this worker's last metrics.
      void registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: PART, id: message.id, metrics }),
        () => process.send?.({ type: PART, id: message.id }),
      );
    } else if (message?.type === MERGED && message.id !== undefined) {
      waiting.get(message.id)?.(message.text ?? '');
      waiting.delete(message.id);
    }
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary did not answer with the workers\' metrics'));
      }, GATHER_TIMEOUT_MS * 2);
      waiting.set(id, (text) => {
        clearTimeout(timer);
        resolve(text);
      });
      process.send?.({ type: ASK, id });
    });
}

/** One worker's metrics in prom-client's JSON form. */
type Part = Array<{ name: string; type: string; aggregator?: string }>;
type Aggregated = Parameters<typeof AggregatorRegistry.aggregate>[0];

/** The merged metrics of `parts`, as Prometheus text. */
async function merge(parts: Part[]): Promise<string> {
  return AggregatorRegistry.aggregate(parts as unknown as Aggregated).metrics();
}

/**
 * What stays of a worker that exited: its counters and histograms (monotonic; its gauges described
 * a process that is gone). prom-client omits the start time when aggregating: the earliest is kept.
 */
function retire(part: Part): Part {
  return part.filter((metric) => metric.type === 'counter' || metric.type === 'histogram');
}

function withStartTime(part: Part): Part {
  return part.map((metric) => (metric.name.endsWith('process_start_time_seconds') ? { ...metric, aggregator: 'min' } : metric));
}

/** In the primary: answers each worker's ASK with the merged metrics of `workers()`. */
export function mergeWorkerMetrics(workers: () => Iterable<Worker>): void {
  let next = 0;
  /** The last metrics each worker sent, by worker id. */
  const latest = new Map<number, Part>();
  /** The counters of workers that exited (folded into one part now and then). */
  const retired: Part[] = [];
  let folding = false;
  /** The gathering in flight and the scrapes waiting for it. */
  let current: { id: number; left: Set<number>; askers: Array<{ from: Worker; id: number }>; timer: NodeJS.Timeout } | undefined;

  cluster.on('exit', (worker) => {
    const part = latest.get(worker.id);
    latest.delete(worker.id);
    if (part) retired.push(retire(part));
    if (retired.length > 4 && !folding) {
      folding = true;
      const folded = retired.slice();
      void AggregatorRegistry.aggregate(folded as unknown as Aggregated)
        .getMetricsAsJSON()
        .then((json) => retired.splice(0, folded.length, json as unknown as Part))
        .finally(() => (folding = false));
    }
    if (current?.left.delete(worker.id) && current.left.size === 0) finish();
  });

  const finish = () => {
    const gathering = current!;
    current = undefined;
    clearTimeout(gathering.timer);
    const parts = [...[...latest.values()].map(withStartTime), ...retired];
    void merge(parts).then(
      (text) => {
        for (const asker of gathering.askers) if (asker.from.isConnected()) asker.from.send({ type: MERGED, id: asker.id, text });
      },
      () => undefined,
    );
  };

  cluster.on('message', (from: Worker, message: Message) => {
    if (message?.type === PART && message.id !== undefined) {
      if (!current || message.id !== current.id || !current.left.delete(from.id)) return;
      if (message.metrics) latest.set(from.id, message.metrics as Part);
      if (current.left.size === 0) finish();
      return;
    }
    if (message?.type !== ASK || message.id === undefined) return;
    if (current) {
      current.askers.push({ from, id: message.id });
      return;
    }
    const id = next++;
    current = { id, left: new Set(), askers: [{ from, id: message.id }], timer: setTimeout(finish, GATHER_TIMEOUT_MS) };
    for (const worker of workers()) {
      if (!worker.isConnected()) continue;
      current.left.add(worker.id);
      worker.send({ type: GATHER, id });
    }
    if (current.left.size === 0) finish();
  });
}
