// Usage: node .ci/summary.mjs <vitest JSON report> <vitest exit status> [<report> <status> ...]
// Prints the closing "N passed, N failed" line, where N counts tests, and exits non-zero if the run
// failed. Failures that no test count shows get their own line above it: a test file that failed
// outside its tests (it did not load, or a hook failed so its tests did not run), no tests at all,
// or vitest failing for another reason (an unhandled error). Each failed test is named too.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const args = process.argv.slice(2);
let passed = 0;
let failedTests = 0;
let failed = false;
for (let i = 0; i < args.length; i += 2) {
  const report = JSON.parse(readFileSync(args[i], 'utf8'));
  const vitestStatus = Number(args[i + 1] ?? '0');
  const run = args.length > 2 ? ` [${args[i]}]` : '';
  let unexplained = vitestStatus !== 0;
  let fileFailed = false;
  for (const file of report.testResults) {
    if (file.status !== 'failed' || file.assertionResults.some((a) => a.status === 'failed')) continue;
    fileFailed = true;
    const notRun = file.assertionResults.filter((a) => a.status !== 'passed').length;
    const reason = (file.message || 'failed').split('\n')[0];
    console.log(`test file failed outside its tests${run}: ${relative(process.cwd(), file.name)}: ${reason}${notRun ? ` (${notRun} of its tests did not run)` : ''}`);
  }
  // Name each failed test: CI keeps only the tail of the output, where the closing line is.
  for (const file of report.testResults) {
    for (const a of file.assertionResults) {
      if (a.status !== 'failed') continue;
      const why = (a.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300);
      console.log(`failed${run}: ${relative(process.cwd(), file.name)} > ${a.fullName ?? a.title}${why ? `: ${why}` : ''}`);
    }
  }
  if (report.numTotalTests === 0) {
    console.log(`no tests ran${run}`);
    fileFailed = true;
  }
  if (report.numFailedTests > 0 || fileFailed) unexplained = false;
  if (unexplained) console.log(`vitest exited with status ${vitestStatus}${run} (an error outside any test, see its output above)`);
  passed += report.numPassedTests;
  failedTests += report.numFailedTests;
  failed ||= fileFailed || report.numFailedTests > 0 || vitestStatus !== 0;
}
console.log(`${passed} passed, ${failedTests} failed`);
process.exit(failed ? 1 : 0);
