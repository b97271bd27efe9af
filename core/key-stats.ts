// How many active keys expire within the next 7 days: only the keys plugin knows (a count in the
// database), and the metrics report it as a gauge. The keys plugin provides the source and refreshes
// the count off the request path; readers get the last count. Lives in PluginDeps so neither plugin
// imports the other.

export const EXPIRING_WINDOW_DAYS = 7;

export interface KeyStatsSource {
  /** Active keys expiring within EXPIRING_WINDOW_DAYS, as of the last refresh. */
  expiringSoon(): number;
  /** Counts again; never rejects. */
  refresh(): Promise<void>;
}

export class KeyStatsBoard {
  private source: KeyStatsSource | undefined;

  provide(source: KeyStatsSource): void {
    this.source = source;
  }

  /** Undefined when no key store is running. */
  expiringSoon(): number | undefined {
    return this.source?.expiringSoon();
  }

  refresh(): Promise<void> {
    return this.source ? this.source.refresh() : Promise.resolve();
  }
}
