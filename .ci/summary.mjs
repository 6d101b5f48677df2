// Usage: node .ci/summary.mjs <vitest JSON report> <vitest exit status>
// Prints the closing "N passed, N failed" line, where N counts tests, and exits non-zero if the run
// failed. Failures that no test count shows get their own line above it: a test file that failed
// outside its tests (it did not load, or a hook failed so its tests did not run), no tests at all,
// or vitest failing for another reason (an unhandled error).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [reportPath, statusText = '0'] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const vitestStatus = Number(statusText);

let unexplained = vitestStatus !== 0;
let failed = false;
for (const file of report.testResults) {
  if (file.status !== 'failed' || file.assertionResults.some((a) => a.status === 'failed')) continue;
  failed = true;
  const notRun = file.assertionResults.filter((a) => a.status !== 'passed').length;
  const reason = (file.message || 'failed').split('\n')[0];
  console.log(`test file failed outside its tests: ${relative(process.cwd(), file.name)}: ${reason}${notRun ? ` (${notRun} of its tests did not run)` : ''}`);
}
if (report.numTotalTests === 0) {
  console.log('no tests ran');
  failed = true;
}
if (report.numFailedTests > 0 || failed) unexplained = false;
if (unexplained) console.log(`vitest exited with status ${vitestStatus} (an error outside any test, see its output above)`);
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed`);
process.exit(failed || report.numFailedTests > 0 || vitestStatus !== 0 ? 1 : 0);
