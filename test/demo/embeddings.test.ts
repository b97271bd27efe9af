// The demo's simulated providers answer embeddings in their native protocols, well enough for the
// real adapters: each gives one unit vector per text, the same vector for the same text, of the
// length asked for or the catalog's default for the model, with usage as that provider reports it
// (Gemini: none). Driven through the adapters directly, without the gateway in between.
import t from 'tap';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import type { Provider } from '../../core/provider.js';
import { startSimulation, type Simulation } from '../../demo/simulation.js';
import { openai } from '../../providers/openai/index.js';
import { custom } from '../../providers/custom/index.js';
import { google } from '../../providers/google/index.js';
import { cohere } from '../../providers/cohere/index.js';
import { mistral } from '../../providers/mistral/index.js';

const simulation: Simulation = await startSimulation({ failureRate: 0, speed: 0 });
t.teardown(() => simulation.close());

const catalog = loadCatalog();
const text3 = catalog.get('openai', 'text-embedding-3-small')!;
const cases: Array<[string, (env: Record<string, string>) => Provider, CatalogModel, number]> = [
  ['openai', (env) => openai.create({ OPENAI_API_KEY: env.OPENAI_API_KEY, OPENAI_BASE_URL: env.OPENAI_BASE_URL }), text3, 1536],
  // The demo's own catalog file gives its self-hosted embedding model 768 dimensions.
  ['custom', (env) => custom.create({ CUSTOM_API_KEY: env.CUSTOM_API_KEY, CUSTOM_BASE_URL: env.CUSTOM_BASE_URL }), { ...text3, provider: 'custom', id: 'nomic-embed-text', native_id: 'nomic-embed-text' }, 768],
  ['google', (env) => google.create({ GOOGLE_API_KEY: env.GOOGLE_API_KEY, GOOGLE_BASE_URL: env.GOOGLE_BASE_URL }), catalog.get('google', 'gemini-embedding-001')!, 3072],
  ['cohere', (env) => cohere.create({ COHERE_API_KEY: env.COHERE_API_KEY, COHERE_BASE_URL: env.COHERE_BASE_URL }), catalog.get('cohere', 'embed-english-v3.0')!, 1024],
  ['mistral', (env) => mistral.create({ MISTRAL_API_KEY: env.MISTRAL_API_KEY, MISTRAL_BASE_URL: env.MISTRAL_BASE_URL }), catalog.get('mistral', 'mistral-embed')!, 1024],
];

t.test('each simulated provider embeds natively: unit vectors, stable per text, the default or asked length', async (t) => {
  for (const [name, create, model, defaultLength] of cases) {
    const provider = create(simulation.env);
    const context = { model, stream: false, requestId: 'req-1' };
    const embed = async (dimensions?: number) => {
      const upstream = provider.embeddingsRequest!({ model: model.id, input: ['the cat sat', 'on the mat', 'the cat sat'], dimensions }, context);
      const response = await fetch(upstream.url, { method: upstream.method, headers: upstream.headers, body: upstream.body });
      t.equal(response.status, 200, `${name} answered`);
      return provider.embeddingsResponse!(await response.json(), { ...context, inputs: 3, estimatedTokens: 999 });
    };
    const answer = await embed();
    t.equal(answer.data.length, 3, `${name}: one vector a text`);
    t.equal(answer.data[0]!.embedding.length, defaultLength, `${name}: the model's default length`);
    t.ok(Math.abs(Math.hypot(...answer.data[1]!.embedding) - 1) < 1e-9, `${name}: a unit vector`);
    // Compared as text: tap's deep comparison of 3,072-number lists is slow.
    const [first, second, third] = answer.data.map((item) => JSON.stringify(item.embedding));
    t.equal(first, third, `${name}: the same text, the same vector`);
    t.not(first, second, `${name}: another text, another vector`);
    t.equal(answer.usage.prompt_tokens === 999, name === 'google', `${name}: ${name === 'google' ? 'no usage reported' : 'usage reported'}`);
    if (name !== 'cohere') t.equal((await embed(64)).data[0]!.embedding.length, 64, `${name}: the asked length`);
  }
});
