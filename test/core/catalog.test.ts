import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCatalog, costOf, isPriced, kindOf, CatalogFileError } from '../../core/catalog.js';
import { startGateway } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'modelgate-catalog-'));
const file = (name: string, body: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
};

t.test('the built-in catalog holds every priced model of the source with a quality score', async (t) => {
  const catalog = loadCatalog();
  // 43 priced models in the source; mistral-large-2512 is the dated release of mistral-large-latest: an alias, not an entry.
  t.equal(catalog.models.filter((m) => kindOf(m) === 'chat').length, 42);
  t.same([...new Set(catalog.models.map((m) => m.provider))].sort(), ['anthropic', 'cohere', 'google', 'mistral', 'openai']);
  for (const model of catalog.models) {
    t.ok(isPriced(model), `${model.id} is priced`);
    t.ok(model.quality.score >= 0 && model.quality.score <= 1, `${model.id} quality in 0..1`);
    t.ok(model.quality.source.length > 0, `${model.id} says where its quality comes from`);
  }
  // claude-opus-4-5 is #4 of 283 on the style-controlled board: (283 - 4) / 282.
  t.equal(catalog.get('anthropic', 'claude-opus-4-5')!.quality.score, 0.989);
  t.equal(catalog.get('openai', 'gpt-5.5')!.quality.estimated, true);
  t.same(catalog.find('claude-sonnet-4-5-20250929').map((m) => m.id), ['claude-sonnet-4-5'], 'aliases resolve');
  t.same(catalog.find('mistral-large-2512').map((m) => m.id), ['mistral-large-latest'], 'a dated release resolves to its one entry');
});

t.test('the embedding models of the providers with adapters are in the catalog, unscored and never billed for output', async (t) => {
  const embedding = loadCatalog().models.filter((m) => kindOf(m) === 'embedding');
  // 20 in the source: 6 are Vertex AI entries, which the Gemini API adapter cannot serve, and
  // codestral-embed-2505 is the dated release of codestral-embed: an alias; embed-multilingual-light-v3.0
  // is left out: its source price is flagged as a likely error (1000x its siblings).
  t.equal(embedding.length, 12);
  t.same(loadCatalog().find('embed-multilingual-light-v3.0'), [], 'no bill on a doubtful price');
  t.same(loadCatalog().find('codestral-embed-2505').map((m) => m.id), ['codestral-embed']);
  t.same([...new Set(embedding.map((m) => m.provider))].sort(), ['cohere', 'google', 'mistral', 'openai']);
  for (const model of embedding) {
    t.ok(isPriced(model), `${model.id} is priced`);
    t.equal(model.price.output, 0, `${model.id}: output is not billed`);
    t.equal(model.quality.score, 0, `${model.id} is not scored`);
    t.notOk(Object.values(model.capabilities).some(Boolean), `${model.id} has no chat capabilities`);
  }
  const small = loadCatalog().get('openai', 'text-embedding-3-small')!;
  t.match(small, { dimensions: 1536, context_window: 8191, price: { input: 2e-8 } });
  t.equal(loadCatalog().get('google', 'gemini-embedding-001')!.dimensions, 3072);
  t.equal(loadCatalog().get('mistral', 'mistral-embed')!.dimensions, undefined, 'no length where the source states none');
  t.equal(costOf(small, { prompt_tokens: 1000, completion_tokens: 0, total_tokens: 1000 }), 1000 * 2e-8);
});

t.test("an operator's file overrides fields of existing models and adds new ones", async (t) => {
  const catalog = loadCatalog({
    file: file('override.json', {
      models: [
        { provider: 'openai', id: 'gpt-4o-mini', price: { input: 1e-7 }, quality: { score: 0.6 } },
        { provider: 'custom', id: 'llama-70b', price: { input: 5e-7, output: 7e-7 }, context_window: 8192, quality: { score: 0.7 } },
      ],
    }),
    extra: [{ provider: 'custom', id: 'qwen' }],
  });
  const mini = catalog.get('openai', 'gpt-4o-mini')!;
  t.equal(mini.price.input, 1e-7, 'the overridden field');
  t.equal(mini.price.output, 6e-7, 'the other fields kept');
  t.same(mini.quality, { score: 0.6, estimated: false, source: 'operator catalog file' });
  const llama = catalog.get('custom', 'llama-70b')!;
  t.equal(llama.context_window, 8192);
  t.ok(isPriced(llama));
  const qwen = catalog.get('custom', 'qwen')!;
  t.notOk(isPriced(qwen), 'a model known only by name has no price');
  t.equal(costOf(qwen, { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }), undefined, 'and is never billed as $0');
});

t.test('a broken catalog file stops the boot naming MODELGATE_MODEL_CATALOG', async (t) => {
  t.throws(() => loadCatalog({ file: join(dir, 'missing.json') }), CatalogFileError);
  t.throws(() => loadCatalog({ file: file('bad.json', '{"models": [') }), /cannot read/);
  t.throws(() => loadCatalog({ file: file('invalid.json', { models: [{ provider: 'openai', id: 'x', price: { input: -1 } }] }) }), /must be >= 0/);
  await t.rejects(startGateway({ MODELGATE_MODEL_CATALOG: join(dir, 'missing.json') }), { message: /MODELGATE_MODEL_CATALOG: cannot read/ });
});

t.test('cost: cached prompt tokens at the cached price, cache writes at the write price, long prompts at the long-context price', async (t) => {
  const catalog = loadCatalog();
  const sonnet = catalog.get('anthropic', 'claude-sonnet-4-5')!; // $3 in, $15 out, $0.30 cached, $3.75 cache write (per 1M)
  const usage = { prompt_tokens: 3000, completion_tokens: 100, total_tokens: 3100, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 500 } };
  const expected = 500 * 3e-6 + 2000 * 3e-7 + 500 * sonnet.price.cache_write! + 100 * 1.5e-5;
  t.ok(Math.abs(costOf(sonnet, usage)! - expected) < 1e-12, 'each kind of prompt token at its own price');
  const gpt = catalog.get('openai', 'gpt-5.4')!;
  const long = gpt.price.long_context!;
  t.equal(long.above_prompt_tokens, 272000);
  const big = { prompt_tokens: 300000, completion_tokens: 1000, total_tokens: 301000 };
  t.ok(Math.abs(costOf(gpt, big)! - (300000 * long.input! + 1000 * long.output!)) < 1e-9, 'over the threshold the whole request takes the long-context prices');
});

t.end();
