// The dashboard's build: `vite build web` (root = this folder) writes web/dist, which
// src/http/routes/web-app.ts serves. `vite web` runs a dev server that forwards the API
// to an lmgate on port 8080.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Every asset is a file under /assets/: the CSP allows no data: fonts or scripts.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080' },
  },
});
