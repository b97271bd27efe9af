// What the demo's simulated providers answer to an embeddings call: one unit vector per text,
// derived from a hash of it (the same text always gets the same vector, so the gateway's cache and
// a client's similarity search behave as with a real model), of the length asked for or the
// catalog's default for the model, and the tokens a real tokenizer would count about.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { loadCatalog, type Catalog } from '../core/catalog.js';
import { projectRoot } from '../core/paths.js';
import { estimateTextTokens } from '../core/tokens.js';

/** Where the catalog states no length (Cohere v3, mistral-embed): those models' own, 1024. */
const FALLBACK_DIMENSIONS = 1024;

let catalog: Catalog | undefined;

/** The default vector length of `provider`'s model `nativeId`, from the catalog the demo runs with. */
export function defaultDimensions(provider: string, nativeId: string): number {
  catalog ??= loadCatalog({ file: join(projectRoot, 'demo', 'catalog.json') });
  const model = catalog.models.find((entry) => entry.provider === provider && entry.native_id === nativeId.replace(/^models\//, ''));
  return model?.dimensions ?? FALLBACK_DIMENSIONS;
}

/** A unit vector of `dimensions` numbers, each drawn from SHA-256 of the text and its position. */
export function vectorOf(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}\0${text}`).digest();
    for (let i = 0; i + 1 < digest.length && values.length < dimensions; i += 2) values.push(digest.readUInt16BE(i) / 65535 - 0.5);
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

export interface SimulatedEmbeddings {
  vectors: number[][];
  promptTokens: number;
}

export function embed(provider: string, nativeId: string, texts: string[], dimensions?: number): SimulatedEmbeddings {
  const length = dimensions ?? defaultDimensions(provider, nativeId);
  return {
    vectors: texts.map((text) => vectorOf(text, length)),
    promptTokens: texts.reduce((sum, text) => sum + Math.max(1, estimateTextTokens(text)), 0),
  };
}
