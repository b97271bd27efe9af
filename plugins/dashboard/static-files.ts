// The dashboard's built files (dist/dashboard: index.html and hashed assets), read once at boot into
// memory with their gzip and brotli forms and an ETag — about a hundred kilobytes — so serving a page
// touches no disk. Assets have content-hashed names and are cached for a year; index.html is revalidated.
// The compressed forms are made once, by the build (precompress: `<file>.br` and `<file>.gz` beside
// each file), not at every boot (brotli at quality 11 took ~0.25 s of CPU); a form that is missing or
// does not decompress to the file (a checkout's dashboard edited by hand) is compressed here instead.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);
/** The precompressed forms' suffixes: such a file beside a compressible one is not served itself. */
const FORMS = { brotli: '.br', gzip: '.gz' } as const;
const compressible = (path: string, identity: Buffer) => COMPRESSIBLE.has(extname(path)) && identity.length > 256;
const compressors = { brotli: (data: Buffer) => brotliCompressSync(data), gzip: (data: Buffer) => gzipSync(data, { level: 9 }) };
const decompressors = { brotli: brotliDecompressSync, gzip: gunzipSync };

export interface StaticFile {
  type: string;
  etag: string;
  identity: Buffer;
  gzip?: Buffer;
  brotli?: Buffer;
  /** Content-hashed (under assets/): cached for good. */
  immutable: boolean;
}

/** The files of a built dashboard by their path under /dashboard/ (`index.html`, `assets/index-….js`). */
export function loadDashboard(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const relative of builtFiles(dir)) {
    const identity = readFileSync(join(dir, relative));
    const forms = compressible(relative, identity) ? { gzip: formOf(dir, relative, identity, 'gzip'), brotli: formOf(dir, relative, identity, 'brotli') } : {};
    files.set(relative, fileOf(identity, relative, forms));
  }
  return files;
}

/**
 * Writes the compressed forms beside each compressible file of a built dashboard (`npm run build`
 * does, once Vite has written it), so loadDashboard reads them instead of compressing at every boot.
 */
export function precompress(dir: string): void {
  for (const relative of builtFiles(dir)) {
    const identity = readFileSync(join(dir, relative));
    if (!compressible(relative, identity)) continue;
    for (const form of ['brotli', 'gzip'] as const) writeFileSync(join(dir, relative + FORMS[form]), compressors[form](identity));
  }
}

/** The dashboard's own files (relative paths), not the compressed forms written beside them. */
function builtFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    const entries = readdirSync(join(dir, sub), { withFileTypes: true });
    const names = new Set(entries.map((entry) => entry.name));
    const isForm = (name: string) => Object.values(FORMS).some((suffix) => name.endsWith(suffix) && COMPRESSIBLE.has(extname(name.slice(0, -suffix.length))) && names.has(name.slice(0, -suffix.length)));
    for (const entry of entries) {
      const relative = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relative);
      else if (entry.isFile() && !isForm(entry.name)) out.push(relative);
    }
  };
  walk('');
  return out;
}

/** The precompressed form if it is there and is the file's, else the file compressed now. */
function formOf(dir: string, relative: string, identity: Buffer, form: keyof typeof FORMS): Buffer {
  const path = join(dir, relative + FORMS[form]);
  if (existsSync(path)) {
    const stored = readFileSync(path);
    try {
      // Bounded: a planted decompression bomb fails here and the file is compressed afresh.
      if (decompressors[form](stored, { maxOutputLength: identity.length + 1 }).equals(identity)) return stored;
    } catch {
      // Not a valid stream: compressed below.
    }
  }
  return compressors[form](identity);
}

function fileOf(identity: Buffer, path: string, forms: { gzip?: Buffer; brotli?: Buffer }): StaticFile {
  return {
    type: TYPES[extname(path)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`,
    identity,
    ...forms,
    immutable: path.startsWith('assets/'),
  };
}

/** Where the built dashboard is: beside the compiled plugins in a build, else the current build's (dist/) when running from sources. */
export function dashboardDir(moduleDir: string): string | undefined {
  const candidates = [join(moduleDir, '..', 'dashboard'), join(moduleDir, '..', 'dist', 'dashboard')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets')));
}

/** The body to send for an Accept-Encoding: brotli, then gzip, then as is. */
export function encodingFor(file: StaticFile, accept: string | undefined): { body: Buffer; encoding?: 'br' | 'gzip' } {
  const accepts = (name: string) => accept !== undefined && new RegExp(`(^|[,\\s])${name}(?!;q=0(\\.0*)?(\\s|,|$))`, 'i').test(accept);
  if (file.brotli && accepts('br')) return { body: file.brotli, encoding: 'br' };
  if (file.gzip && accepts('gzip')) return { body: file.gzip, encoding: 'gzip' };
  return { body: file.identity };
}
