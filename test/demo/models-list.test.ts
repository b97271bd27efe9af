// The demo's GET /v1/models, the first list a newcomer reads, names each model once: no id twice,
// no name (id or alias) that means two entries, and no model listed under both its moving name
// (`-latest`) and a dated release of it, which read as the same model twice (mistral-large-latest
// and mistral-large-2512 were).
import t from 'tap';
import { startSimulation } from '../../demo/simulation.js';
import { startGateway, call } from '../helpers/gateway.js';

const simulation = await startSimulation({ failureRate: 0, speed: 0 });
const gateway = await startGateway(simulation.env);
t.teardown(async () => {
  await gateway.close();
  await simulation.close();
});

interface Listed {
  id: string;
  provider?: string;
  aliases?: string[];
}

/** A model's name without what only says which release: `-latest`, `-2512`, `-08-2024`, `-20250929`, `-2024-08-06`. */
function family(id: string): string {
  return id.replace(/-(latest|\d{4}|\d{2}-\d{4}|\d{8}|\d{4}-\d{2}-\d{2})$/, '');
}

function repeated(names: string[]): string[] {
  return [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
}

t.test('every id in the list appears once', async (t) => {
  const { status, json } = await call(gateway.url, '/models');
  t.equal(status, 200);
  const ids = (json.data as Listed[]).map((model) => model.id);
  t.ok(ids.length > 10, `${ids.length} models listed`);
  t.same(repeated(ids), [], 'no id listed twice');
});

t.test('no name a client can send (id or alias) stands for two entries of one provider', async (t) => {
  const models = ((await call(gateway.url, '/models')).json.data as Listed[]).filter((model) => model.provider);
  const names = models.flatMap((model) => [model.id, ...(model.aliases ?? [])].map((name) => `${model.provider}/${name.replace(/^[^/]+\//, '')}`));
  t.same(repeated(names), []);
});

t.test('no model is listed under both its moving name and a dated release of it', async (t) => {
  const models = ((await call(gateway.url, '/models')).json.data as Listed[]).filter((model) => model.provider);
  const families = models.map((model) => `${model.provider}/${family(model.id.replace(/^[^/]+\//, ''))}`);
  t.same(repeated(families), [], 'one entry per model; dated releases are aliases');
});

t.end();
