// `npm start` runs examples/demo.ts: it must exit 0 and show every answer of the story it tells.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the npm start demo', () => {
  it('delivers through the mock service to the Express example and prints each answer', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: root,
      env: { ...process.env, WORKFORCE_WEBHOOK_SECRET: '' },
      timeout: 60_000,
    });
    const steps = stdout.split(/\n(?=\d\. )/);
    expect(steps).toHaveLength(6);
    expect(steps[1]).toContain('answer   202 {"received":true}');
    expect(steps[1]).toMatch(/handler {2}calendar: block /);
    // The leave.approved handler read the request back through the read API of the mock service.
    expect(steps[1]).toMatch(/handler {2}api: .+, Approved/);
    expect(steps[2]).toContain('answer   200 {"received":true,"duplicate":true}');
    expect(steps[2]).toContain('handler  (none ran)');
    expect(steps[3]).toContain('answer   400 {"error":"signature_mismatch"}');
    expect(steps[4]).toContain('answer   400 {"error":"timestamp_out_of_tolerance"}');
    expect(steps[5]).toContain('answer   202 {"received":true}');
    expect(steps[5]).toContain('handler  metrics: benefits.enrolled');
    expect(stdout).toMatch(/handlers ran 5 times/);
  });
});
