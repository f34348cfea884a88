// `#crypto` resolves by import condition: node:crypto under `node`, Web Crypto for every other runtime.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as resolved from '#crypto';
import * as node from '../../../src/crypto/node.js';
import * as web from '../../../src/crypto/web.js';

describe('#crypto', () => {
  it('is the backend this project runs on', () => {
    const expected = process.env.WFWH_CRYPTO === 'web' ? web : node;
    expect(resolved.signHex).toBe(expected.signHex);
  });

  it('maps the node condition to node:crypto and the default to Web Crypto in the published package', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(Object.keys(pkg.imports['#crypto'])).toEqual(['types', 'node', 'default']);
    expect(pkg.imports['#crypto'].node).toBe('./dist/src/crypto/node.js');
    expect(pkg.imports['#crypto'].default).toBe('./dist/src/crypto/web.js');
  });
});
