// A small seeded PRNG (mulberry32) so every fuzz case can be replayed from (seed, case number):
// each case draws from its own generator, derived from both, so case 137 is the same case whether
// or not cases 0..136 ran before it.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator of case `index` of a run seeded with `seed`. */
  static forCase(seed: number, index: number): Prng {
    // Two rounds of a 32-bit integer hash mix the pair, so neighbouring cases are unrelated.
    let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return new Prng((h ^ (h >>> 16)) >>> 0);
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** An integer in [min, max] leaning towards the small end: most hostile sizes are small, a few huge. */
  size(min: number, max: number): number {
    return Math.min(max, min + Math.floor((max - min + 1) ** this.next()) - 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}
