// `tsx bench/profile.ts <server> <variant>`: loads one benchmark server under --cpu-prof and prints its hottest functions.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { load } from './load.js';
import { startServer } from './server-process.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly endTime: number;
  readonly startTime: number;
}

// Where CPU time went, per request: the package's own code, its dependencies, Node's internals, idle.
function category(url: string, functionName: string): string {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  // Dependencies first: their own `dist/` folders are not the package's.
  if (url.includes('node_modules/')) return url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1');
  if (url.includes('/dist/')) return 'workforce-webhooks';
  if (url.includes('/bench/')) return 'bench code';
  return 'node internals, syscalls';
}

const [server = 'node', variant = 'package', seconds = '5'] = process.argv.slice(2);
const dir = `reports/profiles/${server}-${variant}`;
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// BENCH_NODE_ARGS: extra flags for the server, e.g. `--no-allocation-site-pretenuring` to test a V8 heuristic.
const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const running = await startServer(server, variant, {
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...extra],
});
const scheme = server === 'octokit' ? 'github' : 'svc';
await load({ port: running.port, seconds: 1, scheme });
const result = await load({ port: running.port, seconds: Number(seconds), scheme });
await running.stop();
console.log(`${server} ${variant}: ${Math.round(result.requestsPerSecond)} req/s under the profiler`);

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (file === undefined) throw new Error('bench: no profile written');
const profile = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
const categories = new Map<string, number>();
// Only the measured window: start-up (tsx compiling the server) and warm-up are left out.
const windowStart = profile.endTime - (Number(seconds) + 0.1) * 1e6;
let at = profile.startTime;
for (const [i, id] of profile.samples.entries()) {
  at += profile.timeDeltas[i] ?? 0;
  if (at < windowStart) continue;
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const kind = category(url, functionName);
  categories.set(kind, (categories.get(kind) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const where = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '')}:${lineNumber + 1}`;
  self.set(where, (self.get(where) ?? 0) + 1);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [where, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
  console.log(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${where}`);
}
const requests = result.total;
console.log('CPU per request in the measured window (approximate):');
for (const [kind, micros] of [...categories].sort((a, b) => b[1] - a[1])) {
  console.log(`${(micros / requests).toFixed(1).padStart(8)} µs  ${kind}`);
}
console.log(`profile: ${dir}/${file}`);
