// With MODELGATE_WORKERS above one, a scrape of /metrics reaches whichever worker took the
// connection. That worker asks the primary, which gathers every listening worker's metrics
// (prom-client's JSON form, over the cluster's IPC channel) and merges them — counters and
// histograms summed, gauges as each declares its `aggregator` — so Prometheus sees the gateway,
// not a different worker at each scrape.
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
      void registry.getMetricsAsJSON().then((metrics) => process.send?.({ type: PART, id: message.id, metrics }));
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

/** In the primary: answers each worker's ASK with the merged metrics of `workers()`. */
export function mergeWorkerMetrics(workers: () => Iterable<Worker>): void {
  let next = 0;
  const gathering = new Map<number, { parts: unknown[]; left: number; done(): void }>();
  cluster.on('message', (from: Worker, message: Message) => {
    if (message?.type === PART && message.id !== undefined) {
      const gather = gathering.get(message.id);
      if (!gather) return;
      gather.parts.push(message.metrics);
      if (--gather.left === 0) gather.done();
      return;
    }
    if (message?.type !== ASK) return;
    const id = next++;
    const targets = [...workers()];
    const parts: unknown[] = [];
    const done = () => {
      clearTimeout(timer);
      gathering.delete(id);
      const merged = AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0]);
      void merged.metrics().then((text) => {
        if (from.isConnected()) from.send({ type: MERGED, id: message.id, text });
      });
    };
    const timer = setTimeout(done, GATHER_TIMEOUT_MS);
    gathering.set(id, { parts, left: targets.length, done });
    for (const worker of targets) {
      if (worker.isConnected()) worker.send({ type: GATHER, id });
      else gathering.get(id)!.left--;
    }
    if (gathering.get(id)!.left === 0) done();
  });
}
