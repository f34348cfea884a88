// A worker's source bundled as workerd runs it: the package from its sources, `#crypto` resolved to Web Crypto.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Bundles `source` (an ES module whose imports are relative to the repository root, e.g. './src/index.ts') for
 * workerd, with the conditions Workers resolve and the package's Web Crypto backend.
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
    // What the package's `#crypto` import resolves to off Node.
    plugins: [
      {
        name: 'web-crypto',
        setup(builder) {
          builder.onResolve({ filter: /^#crypto$/ }, () => ({ path: resolve(root, 'src/crypto/web.ts') }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}
