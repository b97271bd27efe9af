// The dashboard's built files (dist/dashboard: index.html and hashed assets), read once at boot into
// memory with their gzip and brotli forms and an ETag — about a hundred kilobytes — so serving a page
// touches no disk. Assets have content-hashed names and are cached for a year; index.html is revalidated.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';

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
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const relative = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relative);
      else if (entry.isFile()) files.set(relative, fileOf(readFileSync(join(dir, relative)), relative));
    }
  };
  walk('');
  return files;
}

function fileOf(identity: Buffer, path: string): StaticFile {
  const ext = extname(path);
  const compress = COMPRESSIBLE.has(ext) && identity.length > 256;
  return {
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`,
    identity,
    ...(compress ? { gzip: gzipSync(identity, { level: 9 }), brotli: brotliCompressSync(identity) } : {}),
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
