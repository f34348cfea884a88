// Tests run against the sources: the package's own name and its `#crypto` import resolve to `src/`.
import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

const packageAliases = [
  { find: /^workforce-webhooks$/, replacement: here('./src/index.ts') },
  { find: /^workforce-webhooks\/testing$/, replacement: here('./testing/index.ts') },
  { find: /^workforce-webhooks\/api$/, replacement: here('./api/index.ts') },
  {
    find: /^workforce-webhooks\/(node|express|hono|next|fastify|redis|bullmq|postgres|otel)$/,
    replacement: here('./adapters/$1.ts'),
  },
];

const crypto = (backend: 'node' | 'web') => ({
  find: /^#crypto$/,
  replacement: here(`./src/crypto/${backend}.ts`),
});

const config: ViteUserConfig = defineConfig({
  test: {
    // The default logger speaks on stderr, as it should; a passing test's output is not shown, a failing one's is.
    silent: 'passed-only',
    projects: [
      {
        // Everything, on node:crypto (the `node` condition of `#crypto`).
        resolve: { alias: [...packageAliases, crypto('node')] },
        test: {
          name: 'node',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: ['test/e2e/**'],
          globalSetup: ['test/setup/redis.ts', 'test/setup/postgres.ts', 'test/setup/package.ts'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The core and the Web-standard entry again on Web Crypto: what Workers, Deno and Bun resolve.
        resolve: { alias: [...packageAliases, crypto('web')] },
        test: {
          name: 'web',
          env: { WFWH_CRYPTO: 'web' },
          include: ['test/src/**/*.test.ts', 'test/adapters/fetch.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // Builds and starts real apps (next build / next start): minutes, not seconds.
        resolve: { alias: [...packageAliases, crypto('node')] },
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 600_000 },
      },
    ],
  },
});

export default config;
