// Prints the plain closing line `N passed, N failed` from vitest JSON reports (CI reads it, not vitest's summary).
import { existsSync, readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.error(`test-summary: ${file} is missing (the run did not finish)`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  // A file that failed to load has no tests but must still fail the run.
  for (const suite of report.testResults)
    if (suite.status === 'failed' && suite.assertionResults.length === 0) failed += 1;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
