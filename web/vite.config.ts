/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The built UI ships inside the Python package (src/stackyard/web) and is served
// by the backend at "/". In development, `npm run dev` proxies /api to a backend
// on 127.0.0.1:8080.
export default defineConfig({
  base: "/",
  plugins: [react()],
  build: {
    outDir: "../src/stackyard/web",
    emptyOutDir: true,
  },
  server: {
    proxy: {
      "/api": {
        target: "http://127.0.0.1:8080",
        changeOrigin: false,
      },
    },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
    // The files share a worker and its jsdom (the setup file cleans up after each test, no
    // file replaces a module): 60 s of CPU instead of 127, beside pytest in scripts/test.sh.
    // Checked with --sequence.shuffle.files.
    isolate: false,
    // The suite runs beside pytest at a lower priority (scripts/test.sh): a test that
    // takes 5 s there is slow, not broken. A broken one still fails, only later.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
