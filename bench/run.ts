// `npm run bench`: runs each section in its own pinned process against the built package and prints the tables.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { CAN_PIN, CLIENT_CORE, pinned, SERVER_CORE, tsNode } from './cpu.js';
import { collect, markdown, met, show, type Target } from './report.js';

const SECTIONS = {
  verify: SERVER_CORE,
  http: CLIENT_CORE,
  breakdown: SERVER_CORE,
  'fast-ack': CLIENT_CORE,
  memory: SERVER_CORE,
  redis: CLIENT_CORE,
  // The durable path: servers on the server core, redis-server with the section (the load generator).
  durable: CLIENT_CORE,
  'scale-out': CLIENT_CORE,
  drain: CLIENT_CORE,
  recovery: CLIENT_CORE,
  // Postgres x Postgres against Redis x BullMQ and a hand-written endpoint; the servers run with the section.
  postgres: CLIENT_CORE,
  // Ordering on against off, in process; redis-server with the section.
  ordering: SERVER_CORE,
  // Telemetry off, on the API alone, and on the SDK with in-memory exporters, in process.
  telemetry: SERVER_CORE,
} as const;
type Section = keyof typeof SECTIONS;

const argv = process.argv.slice(2);
const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const onlyArg = argv.find((a) => a.startsWith('--only='));
const only = (onlyArg?.slice('--only='.length).split(',') ?? Object.keys(SECTIONS)) as Section[];

// tsx would follow tsconfig.json's paths to src/; bench/tsconfig.json drops them, so 'workforce-webhooks' is dist/.
const env = { ...process.env, TSX_TSCONFIG_PATH: 'bench/tsconfig.json', BENCH_QUICK: quick ? '1' : '0' };

function runSection(name: Section): Promise<string> {
  // --expose-gc: the memory section reads RSS after a full collection.
  const [command, args] = pinned(SECTIONS[name], tsNode(`bench/${name}.ts`, [], ['--expose-gc']));
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${name} exited ${code}`))));
  });
}

console.log(
  `# workforce-webhooks benchmarks (${quick ? 'quick' : 'full'} run)\n\n` +
    `${new Date().toISOString()}, Node ${process.version}, ${availableParallelism()} cores, ` +
    `${CAN_PIN ? `server pinned to core ${SERVER_CORE}, load generator to core ${CLIENT_CORE}` : 'taskset missing: unpinned'}.\n` +
    'Numbers are ratios from this one run on this one machine; only the ratios mean anything.\n',
);
const targets: Target[] = [];
const failed: string[] = [];
for (const name of only) {
  try {
    const result = collect(await runSection(name));
    if (result === undefined) throw new Error('no result printed');
    for (const table of result.tables) console.log(`${markdown(table)}\n`);
    targets.push(...result.targets);
  } catch (error) {
    failed.push(name);
    console.log(`### ${name}\n\nnot measured: ${(error as Error).message}\n`);
  }
}
console.log('### Targets\n');
for (const target of targets) {
  const goal = `${target.atMost === true ? '≤' : '≥'} ${show(target, target.goal)}`;
  // A value that rounds to its goal gets a third decimal, so that a miss never reads as the goal itself.
  let value = show(target, target.value);
  if (value === show(target, target.goal) && target.value !== target.goal)
    value = show(target, target.value, 3);
  console.log(`- ${met(target) ? 'met' : 'MISSED'}: ${target.name}: ${value} (target ${goal})`);
}
for (const name of failed) console.log(`- MISSED: ${name}: the section did not run`);
