// Counters and histograms counted in plain fields, for the families every request updates.
// prom-client's label children do their work on every call: a counter child's inc hashes its
// labels, validates them and looks the series up; a histogram child's observe also allocates and
// scans the buckets. Here a series is resolved once per label set (`series(...values)`, cached by
// the caller) and counting is a field update: `value += n`, or `sum += v; count++; counts[i]++`
// with a binary search over the fixed bounds — no hashing, no allocation.
//
// Each family is a metric object of its own on the Registry (`registerMetric`): at a scrape,
// `registry.metrics()` and `getMetricsAsJSON()` call its get(), which returns what prom-client's
// Counter and Histogram return — same name, help, type, aggregator, label order, `le` bounds (as
// numbers), cumulative buckets, `_sum` and `_count` — so the text, the JSON the workers send and
// AggregatorRegistry's merge (core/worker-metrics.ts) are unchanged. Values accumulate in the same
// order as prom-client's (one `+=` per call from 0), so even float sums are the same bits.
//
// Series are exported in the order they were first counted, as prom-client's are; a series
// resolved but never counted is not exported (prom-client's labels() creates nothing either), except
// a counter without labels, exported as 0 from the start. remove(...values) ends a series (it is
// exported again, from 0, if counted again) and reset() ends them all: a holder of a series object
// keeps counting into the family's current series for its labels, never into a lost one.
import type { Aggregator, Metric, Registry } from 'prom-client';

interface Config {
  name: string;
  help: string;
  labelNames?: readonly string[];
  registers: Registry[];
}

type Labels = Record<string, string>;

abstract class LocalFamily<S extends LocalSeries> {
  readonly name: string;
  readonly help: string;
  readonly aggregator: Aggregator = 'sum';
  readonly labelNames: readonly string[];
  abstract readonly type: 'counter' | 'histogram';
  /** Every series resolved and not removed, by its label values (seriesKey). */
  protected made = new Map<string, S>();
  /** The exported series, in the order they were first counted. */
  protected listed = new Set<S>();

  constructor(config: Config) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    // Not a prom-client class, but what a Registry asks of one: name, type, get(), reset().
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  protected abstract create(labels: Labels, key: string): S;

  /** The series of these label values (in labelNames order). Resolve once, then count on it. */
  series(...values: string[]): S {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name}: ${values.length} label values for the ${this.labelNames.length} labels ${this.labelNames.join(', ')}`);
    }
    const key = seriesKey(values);
    let series = this.made.get(key);
    if (series === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      this.made.set(key, (series = this.create(labels, key)));
    }
    return series;
  }

  /** The family's series for `series`'s labels, exported from now on (first count, or after remove/reset). */
  attach(series: S): S {
    let current = this.made.get(series.key);
    if (current === undefined) this.made.set(series.key, (current = series));
    if (!current.exported) {
      current.exported = true;
      this.listed.add(current);
    }
    return current;
  }

  /** Ends the series of these label values: Prometheus sees it end. */
  remove(...values: string[]): void {
    const key = seriesKey(values);
    const series = this.made.get(key);
    if (series === undefined) return;
    this.made.delete(key);
    this.end(series);
  }

  /** Ends every series, as prom-client's reset() does. */
  reset(): void {
    for (const series of this.made.values()) this.end(series);
    this.made = new Map();
    this.listed = new Set();
  }

  private end(series: S): void {
    this.listed.delete(series);
    series.exported = false;
    series.clear();
  }

  protected abstract values(): unknown[];

  /** What prom-client's get() returns for the family (getMetricsAsJSON, the workers' merge, and the text). */
  async get() {
    return { help: this.help, name: this.name, type: this.type, values: this.values(), aggregator: this.aggregator };
  }
}

abstract class LocalSeries {
  /** Counted since it was made or last ended, hence exported. */
  exported = false;
  constructor(
    readonly labels: Labels,
    readonly key: string,
  ) {}
  abstract clear(): void;
}

export class CounterSeries extends LocalSeries {
  value = 0;
  constructor(
    private readonly family: LocalCounter,
    labels: Labels,
    key: string,
  ) {
    super(labels, key);
  }

  /** prom-client's checks: a negative or infinite increment throws (NaN goes through, as there). */
  inc(n = 1): void {
    if (n < 0 || n === Infinity) throw new RangeError(`${this.family.name}: a counter cannot increase by ${n}`);
    if (this.exported) this.value += n;
    else this.family.attach(this).value += n;
  }

  clear(): void {
    this.value = 0;
  }
}

export class LocalCounter extends LocalFamily<CounterSeries> {
  readonly type = 'counter';

  constructor(config: Config) {
    super(config);
    this.reset();
  }

  /** The one series of a counter without labels, held: series() would build its key on every call. */
  private unlabelled?: CounterSeries;

  /** Counts on the counter without labels. */
  inc(n = 1): void {
    (this.unlabelled ??= this.series()).inc(n);
  }

  override reset(): void {
    super.reset();
    // As prom-client: a counter without labels is exported as 0 from the start.
    if (this.labelNames.length === 0) this.unlabelled = this.attach(this.series());
  }

  protected create(labels: Labels, key: string): CounterSeries {
    return new CounterSeries(this, labels, key);
  }

  protected values() {
    return [...this.listed].map((series) => ({ value: series.value, labels: series.labels }));
  }
}

export class HistogramSeries extends LocalSeries {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative); those above the last bound are only in count. */
  readonly counts: Float64Array;
  constructor(
    private readonly family: LocalHistogram,
    labels: Labels,
    key: string,
  ) {
    super(labels, key);
    this.counts = new Float64Array(family.bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.family.name}: not a valid number: ${value}`);
    const series = this.exported ? this : this.family.attach(this);
    // The first bound not below value (value <= bound, as prom-client's findBound).
    const bounds = this.family.bounds;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (value <= bounds[mid]!) high = mid;
      else low = mid + 1;
    }
    if (low < bounds.length) series.counts[low]!++;
    series.sum += value;
    series.count++;
  }

  clear(): void {
    this.sum = 0;
    this.count = 0;
    this.counts.fill(0);
  }
}

export class LocalHistogram extends LocalFamily<HistogramSeries> {
  readonly type = 'histogram';
  readonly bounds: Float64Array;
  private readonly upperBounds: readonly number[];

  constructor(config: Config & { buckets: readonly number[] }) {
    super(config);
    if (this.labelNames.includes('le')) throw new Error('le is a reserved label keyword');
    if (config.buckets.some((bound, i) => i > 0 && bound <= config.buckets[i - 1]!)) throw new Error(`${this.name}: buckets must increase`);
    this.upperBounds = [...config.buckets];
    this.bounds = Float64Array.from(config.buckets);
    // As prom-client: a histogram without labels is exported (all zeros) from the start, not after a reset.
    if (this.labelNames.length === 0) this.attach(this.series());
  }

  protected create(labels: Labels, key: string): HistogramSeries {
    return new HistogramSeries(this, labels, key);
  }

  /** prom-client's get(): per series, each bucket (cumulative, `le` a number), +Inf, _sum, _count. */
  protected values() {
    const values: Array<{ value: number; metricName: string; exemplar?: null; labels: Record<string, string | number> }> = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.listed) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ value: cumulative, metricName: bucket, exemplar: null, labels: { le, ...series.labels } });
      });
      values.push({ value: series.count, metricName: bucket, exemplar: null, labels: { le: '+Inf', ...series.labels } });
      values.push({ value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined, labels: { ...series.labels } });
      values.push({ value: series.count, metricName: `${this.name}_count`, exemplar: undefined, labels: { ...series.labels } });
    }
    return values;
  }
}

/** A series' key: its one value, or the values as a JSON array (a joined string could make two tuples one). */
function seriesKey(values: string[]): string {
  return values.length === 1 ? values[0]! : JSON.stringify(values);
}
