import { defineConfig } from "vite";

// The client is served by the game server itself (`/` beside `/graphql`); `vite dev`
// proxies the API to a server on :8000.
export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    target: "es2022",
    // One small entry chunk: nothing is inlined into index.html (strict CSP), and
    // asset names carry content hashes so they can be cached for good.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  server: {
    proxy: { "/graphql": { target: "http://127.0.0.1:8000", ws: true } },
  },
});
