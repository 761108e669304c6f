// Sums vitest JSON reports (and the examples' counts) into the closing line "N passed, N failed".
// A missing or empty report counts as a failure: a suite that did not run must not look green.
import { readFileSync } from 'node:fs';

// Usage: node test-summary.mjs EXAMPLES_PASSED EXAMPLES_FAILED REPORT.json...
const [examplesPassed, examplesFailed, ...reports] = process.argv.slice(2);
let passed = Number(examplesPassed ?? 0);
let failed = Number(examplesFailed ?? 0);
let skipped = 0;
let ok = true;
for (const file of reports) {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    if (report.numTotalTests === 0) throw new Error('no tests ran');
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + (report.numTodoTests ?? 0);
    if (report.numFailedTestSuites > 0) ok = false;
    console.log(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`);
  } catch (error) {
    console.log(`${file}: no usable report (${error.message})`);
    ok = false;
    failed += 1;
  }
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(ok && failed === 0 ? 0 : 1);
