// Summarises a V8 CPU profile (`node --cpu-prof`, or BENCH_CPU_PROF=<dir> with the benches): where the
// process spent its samples, by self time per function and per package or repository directory, so
// docs/benchmarks.md can show the profile of a path before and after a change.
//
//   node bench/profile-summary.js <file.cpuprofile> [top=25]
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');

/** Where a frame's code lives: an npm package, a directory of this repository, node's own, or V8. */
function ownerOf(url) {
  if (!url) return '(v8 / native)';
  if (url.startsWith('node:')) return 'node core';
  const file = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  const rel = path.relative(REPO, file);
  return rel.startsWith('..') ? file : rel.split(path.sep).slice(0, 2).join('/');
}

function summarise(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfSamples = new Map();
  for (const id of profile.samples) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const byFunction = new Map();
  const byOwner = new Map();
  for (const [id, count] of selfSamples) {
    const { callFrame } = byId.get(id);
    const name = callFrame.functionName || '(anonymous)';
    const where = callFrame.url ? `${path.basename(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
    const fnKey = `${name} ${where} [${ownerOf(callFrame.url)}]`;
    byFunction.set(fnKey, (byFunction.get(fnKey) ?? 0) + count);
    const owner = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : ownerOf(callFrame.url);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + count);
  }
  const pct = (n) => `${((100 * n) / total).toFixed(1)} %`;
  const table = (title, map, limit) => {
    const rows = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
    return [`| ${title} | self |`, '|---|---|', ...rows.map(([k, v]) => `| ${k.replace(/\|/g, '\\|')} | ${pct(v)} |`)].join('\n');
  };
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  return [`${total} samples over ${seconds.toFixed(1)} s`, '', table('package or directory', byOwner, top), '', table('function', byFunction, top)].join('\n');
}

const [file, top = '25'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
console.log(summarise(JSON.parse(fs.readFileSync(file, 'utf8')), Number(top)));
