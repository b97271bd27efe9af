// The paced stream's schedule, shared by the fake upstream (which sends by it) and the benchmark
// (which asks for it): a request whose user message holds `paced <seed>` is answered with the role
// chunk at once, the first content chunk `firstMs` later, then one content chunk after each of
// `gapsMs` (1–5 ms, as a model generating tokens), then finish, usage and [DONE] together. The same
// seed gives the same schedule, so the benchmark can send each target the same sequence of
// schedules and compare them request by request.

/** Content chunks in a stream, paced or not (the targets' "streams (20 chunks)"). */
export const CONTENT_CHUNKS = 20;

export interface Schedule {
  firstMs: number;
  gapsMs: number[];
}

/** mulberry32: a small deterministic generator, enough for ms-sized delays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function schedule(seed: number): Schedule {
  const next = random(seed);
  const ms = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return { firstMs: ms(3, 6), gapsMs: Array.from({ length: CONTENT_CHUNKS - 1 }, () => ms(1, 5)) };
}

export const PACED = /paced (\d+)/;
