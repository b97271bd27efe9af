// The dashboard's build: Preact pages bundled by Vite into static files the gateway serves at
// /dashboard (plugins/dashboard.ts). No CDN, no request at run time other than to the gateway's own API.
// scripts/build.mjs runs it with --outDir pointing into the build it is making.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    emptyOutDir: true,
    sourcemap: false,
    // One JS and one CSS file (hashed names): the CSP allows scripts and styles from the gateway only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 300,
    reportCompressedSize: true,
  },
});
