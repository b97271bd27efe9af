// The key_id label of the per-key series, kept bounded: at most `max` keys have series of their own
// (the most recently active; `other` counts the rest). A key gets a series when it is first seen and
// there is room, or when the least recently active key has been idle for IDLE_MS: that key's series
// are removed (Prometheus sees them end) and it counts under `other` should it come back while the
// set is full. So the series never exceed max + 1 whatever the number of keys.
// A key's place is refreshed at most every idleMs / 600 (a second for the 10 minutes): moving it on
// every request (a Map delete and set) allocated as the Map rehashed; a key may so give its place
// up that much before it is idle for the full idleMs.
export const OTHER_KEY = 'other';
export const IDLE_MS = 10 * 60_000;

export class KeyLabels {
  /** Key id → when it was last seen, least recently seen first. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly drop: (keyId: string) => void,
    private readonly idleMs = IDLE_MS,
  ) {
    this.refreshMs = idleMs / 600;
  }

  private readonly refreshMs: number;

  label(keyId: string, now = Date.now()): string {
    const at = this.seen.get(keyId);
    if (at !== undefined) {
      if (now - at >= this.refreshMs) {
        this.seen.delete(keyId);
        this.seen.set(keyId, now);
      }
      return keyId;
    }
    if (this.seen.size >= this.max) {
      const [oldest, at] = this.seen.entries().next().value ?? [];
      if (oldest === undefined || now - at! < this.idleMs) return OTHER_KEY;
      this.seen.delete(oldest);
      this.drop(oldest);
    }
    this.seen.set(keyId, now);
    return keyId;
  }
}
