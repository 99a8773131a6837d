import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard: built into dist/web, which `troupe serve` serves (and nothing outside it).
// Vite 8 transforms TSX itself (oxc); no React plugin, so no fast refresh in dev.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8000' } },
});
