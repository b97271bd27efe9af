// The most prompt tokens one image can be billed on a model, by the providers' documented rules;
// the estimate (core/tokens.ts) counts IMAGE_TOKENS per image and estimateCost adds the difference
// for models that bill more. Read without decoding images, so each is the rule's maximum over sizes:
// - OpenAI tile models (gpt-4o, gpt-4.1, gpt-5, o-series): at "high" detail an image is scaled to fit
//   2048 x 2048 and its short side to 768, at most 8 tiles of 512: 85 + 8 x 170 = 1445 (gpt-5: 70 +
//   8 x 140); gpt-4o-mini bills 2833 + 5667 per tile, so up to 2833 + 8 x 5667 = 48,169;
// - OpenAI patch models (gpt-4.1-mini/nano, o4-mini, gpt-5-mini/nano): at most 1536 patches of 32 px,
//   times 1.62 (mini), 1.72 (o4-mini), 2.46 (nano): up to 2642 for a mini, 3779 for a nano;
// - Anthropic: width x height / 750 after scaling to at most ~1.15 megapixels: ~1600;
// - Gemini: 258 tokens per 768 px tile (1120 per image on Gemini 3 at high media resolution); no
//   size cap is documented, so this assumes the 3072 x 3072 most clients send: 16 tiles, 4128.
import type { CatalogModel } from './catalog.js';

/** What the estimate counts per image: above every tile rule but gpt-4o-mini's, and Anthropic's. */
export const IMAGE_TOKENS = 1600;

const GPT_4O_MINI = 2833 + 8 * 5667;
const NANO = Math.ceil(1536 * 2.46);
const MINI = Math.ceil(1536 * 1.72);
const GEMINI = 16 * 258;

/** The most one image costs on `model`, in prompt tokens. */
export function imageTokens(model: CatalogModel): number {
  const id = model.native_id.toLowerCase();
  if (model.provider === 'google' || id.startsWith('gemini')) return GEMINI;
  if (id.startsWith('gpt-4o-mini')) return GPT_4O_MINI;
  if (/^(gpt|o\d)/.test(id)) {
    if (id.includes('nano')) return NANO;
    if (id.includes('mini')) return MINI;
  }
  return IMAGE_TOKENS;
}
