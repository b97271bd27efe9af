// The dashboard's files as the gateway serves them: the built page and its hashed assets from
// memory, compressed when asked, revalidated by ETag, under the security headers; nothing inline for
// the CSP to refuse; small (the whole page under 300 KB gzipped); absent when turned off.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import t from 'tap';
import { call, startGateway, type TestGateway } from '../helpers/gateway.js';
import { dashboardDir, loadDashboard } from '../../plugins/dashboard/static-files.js';
import { SECURITY_HEADERS } from '../../plugins/dashboard.js';

let gateway: TestGateway;
let origin: string;

t.before(async () => {
  gateway = await startGateway();
  origin = new URL(gateway.url).origin;
});
t.teardown(() => gateway.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${origin}${path}`, { headers });

t.test('the page: HTML under the security headers, revalidated by its ETag', async (t) => {
  for (const path of ['/dashboard', '/dashboard/']) {
    const page = await get(path);
    t.equal(page.status, 200, path);
    t.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    t.equal(page.headers.get('cache-control'), 'no-cache');
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) t.equal(page.headers.get(name), value, name);
    t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    t.notMatch(page.headers.get('content-security-policy'), /unsafe-inline|unsafe-eval/);
    const html = await page.text();
    t.match(html, /<script type="module" crossorigin src="\/dashboard\/assets\/[\w-]+\.js"><\/script>/);
    t.notMatch(html.replace(/<script[^>]*src="[^"]+"[^>]*><\/script>/g, ''), /<script|<style|\sstyle=|\son\w+=/i, 'nothing inline: no script, style or handler the CSP would refuse');
    const again = await get(path, { 'if-none-match': page.headers.get('etag')! });
    t.equal(again.status, 304);
  }
});

t.test('assets: compressed as asked, cached for good; an unknown one is 404 with the headers', async (t) => {
  const html = await (await get('/dashboard')).text();
  const script = /src="(\/dashboard\/assets\/[^"]+)"/.exec(html)![1]!;
  const plain = await get(script, { 'accept-encoding': 'identity' });
  t.equal(plain.status, 200);
  t.equal(plain.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const body = Buffer.from(await plain.arrayBuffer());

  const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
    import('node:http').then(({ get: httpGet }) => {
      httpGet(`${origin}${script}`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject);
    }, reject);
  });
  t.equal(raw.encoding, 'gzip');
  t.ok(gunzipSync(raw.body).equals(body), 'the gzip form is the same file');
  t.ok(raw.body.length < body.length / 2);

  const missing = await get('/dashboard/assets/nothing.js');
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-security-policy'), SECURITY_HEADERS['content-security-policy']);
  t.equal((await get('/dashboard/other')).status, 404);
});

t.test('the whole page is under 300 KB gzipped', async (t) => {
  const dir = dashboardDir(join(import.meta.dirname, '..', '..', 'plugins'))!;
  t.ok(dir, 'a built dashboard');
  const { gzipSync } = await import('node:zlib');
  const files = ['index.html', ...readdirSync(join(dir, 'assets')).filter((name) => !/\.(br|gz)$/.test(name)).map((name) => `assets/${name}`)];
  const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(dir, file)), { level: 9 }).length, 0);
  t.comment(`dashboard: ${files.length} files, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  t.ok(gzipped < 300 * 1024);
});

t.test('compressed by the build: the forms beside each file are its own, and are what is served', async (t) => {
  const dir = dashboardDir(join(import.meta.dirname, '..', '..', 'plugins'))!;
  const loaded = loadDashboard(dir);
  t.same([...loaded.keys()].filter((path) => /\.(br|gz)$/.test(path)), [], 'the forms are not served as files of their own');
  const script = [...loaded.keys()].find((path) => path.endsWith('.js'))!;
  t.ok(script, 'a script');
  for (const [path, file] of loaded) {
    if (!file.brotli) continue;
    const br = readFileSync(join(dir, `${path}.br`));
    const gz = readFileSync(join(dir, `${path}.gz`));
    t.ok(brotliDecompressSync(br).equals(file.identity), `${path}.br is the file`);
    t.ok(gunzipSync(gz).equals(file.identity), `${path}.gz is the file`);
    t.ok(file.brotli.equals(br) && file.gzip!.equals(gz), `${path}: the build's forms are served`);
  }

  // A copy whose forms are recognisably the build's (quality 1), one stale, one missing.
  const copy = mkdtempSync(join(tmpdir(), 'dashboard-'));
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(dir, copy, { recursive: true });
  const identity = readFileSync(join(copy, script));
  const quick = brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  writeFileSync(join(copy, `${script}.br`), quick);
  writeFileSync(join(copy, 'index.html.br'), brotliCompressSync(Buffer.from('<p>an older page</p>')));
  rmSync(join(copy, 'index.html.gz'));
  const fromCopy = loadDashboard(copy);
  t.ok(fromCopy.get(script)!.brotli!.equals(quick), 'a stored form is read, not made again');
  const index = fromCopy.get('index.html')!;
  t.ok(brotliDecompressSync(index.brotli!).equals(index.identity), 'a stale form is replaced by the file compressed');
  t.ok(gunzipSync(index.gzip!).equals(index.identity), 'a missing form is made');
  t.equal(index.etag, loaded.get('index.html')!.etag, 'the ETag is the content hash, whatever the forms');
});

t.test('turned off: no page, no sign-in', async (t) => {
  const off = await startGateway({ MODELGATE_DASHBOARD_ENABLED: 'false' });
  t.teardown(() => off.close());
  const offOrigin = new URL(off.url).origin;
  t.equal((await fetch(`${offOrigin}/dashboard`)).status, 404);
  const signIn = await call(offOrigin, '/dashboard/session', { key: null, body: JSON.stringify({ key: 'uc_x' }) });
  t.equal(signIn.status, 404);
});
