// A worker's source bundled as workerd runs it (as wrangler would): the package from its sources, `#crypto` resolved to
// Web Crypto.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Bundles `source` (an ES module importing './src/index.ts' relative to the repository root, or `workforce-webhooks`
 * and `workforce-webhooks/hono`, both from the sources) for workerd, with the conditions Workers resolve and the
 * package's Web Crypto backend.
 * @example
 * const mf = new Miniflare({ modules: true, script: await bundleForWorkerd(WORKER), compatibilityDate });
 */
export async function bundleForWorkerd(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'sources',
        setup(builder) {
          builder.onResolve({ filter: /^workforce-webhooks$/ }, () => ({
            path: resolve(root, 'src/index.ts'),
          }));
          builder.onResolve({ filter: /^workforce-webhooks\/hono$/ }, () => ({
            path: resolve(root, 'adapters/hono.ts'),
          }));
          // What the package's `#crypto` import resolves to off Node.
          builder.onResolve({ filter: /^#crypto$/ }, () => ({ path: resolve(root, 'src/crypto/web.ts') }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}
