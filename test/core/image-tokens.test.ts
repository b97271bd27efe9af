// What one image can cost per model (core/image-tokens.ts), by the providers' documented rules.
import t from 'tap';
import { imageTokens, IMAGE_TOKENS } from '../../core/image-tokens.js';
import { loadCatalog } from '../../core/catalog.js';

t.test('each catalog model gets its rule: gpt-4o-mini ~48k, patch minis and nanos more than 1600, Gemini 4128, the rest 1600', async (t) => {
  const catalog = loadCatalog();
  const of = (id: string) => imageTokens(catalog.models.find((model) => model.id === id)!);
  t.equal(of('gpt-4o-mini'), 2833 + 8 * 5667);
  t.equal(of('gpt-4.1-mini'), Math.ceil(1536 * 1.72));
  t.equal(of('gpt-5.4-nano'), Math.ceil(1536 * 2.46));
  t.equal(of('gpt-4o'), IMAGE_TOKENS, 'a tile model: 85 + 8 x 170 = 1445 at most');
  t.equal(of('claude-sonnet-4-5'), IMAGE_TOKENS, "Anthropic's ~1.15 MP / 750");
  t.equal(of('gemini-2.5-flash'), 16 * 258);
  for (const model of catalog.models) t.ok(imageTokens(model) >= IMAGE_TOKENS, `${model.id}: never below the estimate's ${IMAGE_TOKENS}`);
});
