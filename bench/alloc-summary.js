'use strict';
/**
 * Who allocated most, from a sampled allocation profile (bench/alloc-sampler.js):
 * `node bench/alloc-summary.js <file.heapprofile> [top=30]`. Prints the share of the sampled bytes each
 * function allocated itself (self) and under it (total, each function counted once per stack), so the
 * garbage behind a GC share in a CPU profile can be traced to its makers.
 */
const fs = require('node:fs');

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/alloc-summary.js <file.heapprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const { head } = JSON.parse(fs.readFileSync(file, 'utf8'));

const nameOf = ({ callFrame: f }) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|libs|services)\//, '$1/')}:${f.lineNumber + 1}`;
const self = new Map();
const total = new Map();
let all = 0;
(function walk(node, above) {
  const name = nameOf(node);
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  all += node.selfSize;
  const below = new Set(above).add(name);
  const subtree = node.children.reduce((sum, child) => sum + walk(child, below), node.selfSize);
  // Recursion: a function is credited once for the bytes under its outermost frame.
  if (!above.has(name)) total.set(name, (total.get(name) ?? 0) + subtree);
  return subtree;
})(head, new Set());

const table = (title, map) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * bytes) / all).toFixed(1).padStart(6)} %  ${name}\n`);
  }
};
process.stdout.write(`${(all / 1048576).toFixed(1)} MiB sampled\n`);
table('self (allocated by the function itself)', self);
table('total (allocated under the function)', total);
