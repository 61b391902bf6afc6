// Summarises a V8 CPU profile (`node --cpu-prof`, or BENCH_CPU_PROF=<dir> with the benches): where the
// process spent its samples, by self time per function and per package or repository directory, so
// docs/benchmarks.md can show the profile of a path before and after a change. A bench's profile spans
// the whole process (start-up, warm-up, the raw baseline): the first line shows how busy each second
// was, and a window in seconds from the profile's start keeps only the busy samples of the phase to
// read (the shares are then of those).
//
//   node bench/profile-summary.js <file.cpuprofile> [top=25] [from-s to-s]
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

/** The samples' node ids with the second (from the profile's start) each was taken in. */
function timedSamples(profile) {
  let at = profile.startTime;
  return profile.samples.map((id, i) => {
    at += profile.timeDeltas[i];
    return { id, second: Math.floor((at - profile.startTime) / 1e6) };
  });
}

/** "second:busy %" for each second of the profile, busy being every sample but (idle). */
function timeline(samples, isIdle) {
  const perSecond = [];
  for (const { id, second } of samples) {
    perSecond[second] ??= { all: 0, busy: 0 };
    perSecond[second].all += 1;
    if (!isIdle(id)) perSecond[second].busy += 1;
  }
  return perSecond.map((s, second) => `${second}:${s ? Math.round((100 * s.busy) / s.all) : 0}`).join(' ');
}

function summarise(profile, top, window) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';
  const samples = timedSamples(profile);
  const counted = window ? samples.filter((s) => s.second >= window.from && s.second < window.to && !isIdle(s.id)) : samples;
  const selfSamples = new Map();
  for (const { id } of counted) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
  const total = counted.length;
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
  const counting = window ? `${total} busy samples from second ${window.from} to ${window.to}` : `${total} samples over ${seconds.toFixed(1)} s`;
  return [
    `busy % per second — ${timeline(samples, isIdle)}`,
    '',
    counting,
    '',
    table('package or directory', byOwner, top),
    '',
    table('function', byFunction, top),
  ].join('\n');
}

const [file, top = '25', from, to] = process.argv.slice(2);
const window = from === undefined ? undefined : { from: Number(from), to: Number(to) };
if (!file || Number.isNaN(Number(top)) || (window && !(window.from < window.to))) {
  process.stderr.write('usage: node bench/profile-summary.js <file.cpuprofile> [top=25] [from-s to-s]\n');
  process.exit(2);
}
console.log(summarise(JSON.parse(fs.readFileSync(file, 'utf8')), Number(top), window));
