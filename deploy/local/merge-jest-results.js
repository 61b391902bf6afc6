// Merges the --json result files of several jest runs (one per test tier, deploy/local/run-tests.sh)
// into one file of the same shape, so `.ci/run` reads one set of counts whatever ran.
//   node merge-jest-results.js <out.json> <tier.json>...
const fs = require('node:fs');

const [out, ...inputs] = process.argv.slice(2);
const runs = inputs.filter((file) => fs.existsSync(file) && fs.statSync(file).size > 0).map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
const merged = { success: runs.length === inputs.length, testResults: [] };
for (const run of runs) {
  for (const [key, value] of Object.entries(run)) {
    if (typeof value === 'number' && key !== 'startTime') merged[key] = (merged[key] ?? 0) + value;
  }
  merged.success = merged.success && run.success === true;
  merged.startTime = Math.min(merged.startTime ?? run.startTime, run.startTime);
  merged.testResults.push(...run.testResults);
}
fs.writeFileSync(out, JSON.stringify(merged));
