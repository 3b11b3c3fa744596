/**
 * Prints the suite's plain closing line, "tests: N passed, N failed, N skipped", from vitest's JSON
 * reports (the main suite and the end-to-end one), so that CI reads the count whatever reporter it
 * knows. A report that is missing counts as one failure.
 */
import { readFileSync } from "node:fs";

const files = process.argv.length > 2 ? process.argv.slice(2) : ["dist/test-results.json"];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
    };
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + r.numTodoTests;
  } catch {
    console.log(`${file}: no test report was written`);
    failed += 1;
  }
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
