// Merges the --json result files of several jest runs (one per test tier, deploy/local/run-tests.sh)
// into one file of the same shape, so `.ci/run` reads one set of counts whatever ran.
//   node merge-jest-results.js <out.json> <tier.json>...
const fs = require('node:fs');

const [out, ...inputs] = process.argv.slice(2);
const present = (file) => fs.existsSync(file) && fs.statSync(file).size > 0;
const runs = inputs.filter(present).map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
// A tier that wrote no results (stopped by its time limit, or jest failed to start) counts as one
// failed suite, so the summary line cannot read "0 failed" for it.
const missing = inputs.filter((file) => !present(file));
for (const file of missing) console.error(`no jest results in ${file}: counted as a failed suite`);
const merged = { success: missing.length === 0, testResults: [], numRuntimeErrorTestSuites: missing.length };
for (const run of runs) {
  for (const [key, value] of Object.entries(run)) {
    if (typeof value === 'number' && key !== 'startTime') merged[key] = (merged[key] ?? 0) + value;
  }
  merged.success = merged.success && run.success === true;
  merged.startTime = Math.min(merged.startTime ?? run.startTime, run.startTime);
  merged.testResults.push(...run.testResults);
}
fs.writeFileSync(out, JSON.stringify(merged));
