/**
 * Prints the suite's plain closing lines from vitest's JSON reports (the main suite and the
 * end-to-end one), so that the tail of a CI log says what went wrong whatever reporter it knows:
 * - each failed test, with the first lines of its error;
 * - each test that failed once and passed on its retry (`make test` allows one), as "flaky";
 * - "tests: N passed, N failed, N skipped".
 * A report that is missing counts as one failure.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";

interface Assertion {
  fullName: string;
  status: string;
  failureMessages: string[];
}
interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: { name: string; status: string; message: string; assertionResults: Assertion[] }[];
}

/** The first lines of an error, enough to name the cause in a CI log's tail. */
function firstLines(message: string, count = 6): string {
  return message
    .split("\n")
    .slice(0, count)
    .map((line) => `      ${line}`)
    .join("\n");
}

const files = process.argv.length > 2 ? process.argv.slice(2) : ["dist/test-results.json"];
let passed = 0;
let failed = 0;
let skipped = 0;
const failures: string[] = [];
const flaky: string[] = [];
for (const file of files) {
  let r: Report;
  try {
    r = JSON.parse(readFileSync(file, "utf8")) as Report;
  } catch {
    console.log(`${file}: no test report was written`);
    failed += 1;
    continue;
  }
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  for (const suite of r.testResults) {
    const where = relative(process.cwd(), suite.name);
    // A file that failed outside its tests (an import error, a hook) has no failed assertion.
    if (suite.status === "failed" && !suite.assertionResults.some((a) => a.status === "failed")) {
      failures.push(`  ${where}\n${firstLines(suite.message || "the file failed outside its tests")}`);
    }
    for (const a of suite.assertionResults) {
      const error = a.failureMessages[0];
      if (a.status === "failed") failures.push(`  ${where} > ${a.fullName}\n${firstLines(error ?? "")}`);
      // vitest keeps a retried test's earlier errors: a pass with errors passed on its retry.
      else if (a.status === "passed" && error !== undefined) flaky.push(`  ${where} > ${a.fullName}\n${firstLines(error, 3)}`);
    }
  }
}
if (flaky.length > 0) console.log(`flaky (failed once, passed on the retry):\n${flaky.join("\n")}`);
if (failures.length > 0) console.log(`failed:\n${failures.join("\n")}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
