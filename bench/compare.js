// Alternated comparison of bench:publish between a base revision and this checkout
// (`npm run bench:compare -- <base-rev> [pairs]`; needs the local stack: deploy/local/stack.sh up).
// Not a test: it prints figures, nothing passes or fails.
//
// This VM's speed drifts by up to ~2× within minutes (docs/benchmarks.md, "The machine and its drift"),
// so one run before a change and one after compares two moments, not two builds. This runs the base
// and this checkout in turn, pair by pair, on the same stack (BUS_LOCAL_DIR), and says in how many pairs each was ahead. The base is a
// git worktree in $TMPDIR/bus-compare/<commit> (outside the repository, where jest, tsc and eslint
// would find it), installed and built once and kept for the next run.
// Every BENCH_* variable is passed on to both (BENCH_LAYOUT, BENCH_SECONDS, BENCH_CONCURRENCY, ...).
// Each build runs its own bench/publish.js: a change to the bench itself shows as a difference too.
'use strict';

const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const [baseRev, pairsArg = '3'] = process.argv.slice(2);
if (!baseRev) {
  process.stderr.write('usage: node bench/compare.js <base-rev> [pairs]\n');
  process.exit(2);
}
const PAIRS = Number(pairsArg);
if (!Number.isInteger(PAIRS) || PAIRS < 1) throw new Error(`pairs must be a positive integer, not ${pairsArg}`);

const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** A built worktree of `rev`, made once and reused. */
function baseTree(rev) {
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const dir = path.join(os.tmpdir(), 'bus-compare', commit.slice(0, 12));
  const step = (what, command, args) => {
    process.stderr.write(`${what}\n`);
    const run = spawnSync(command, args, {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, PATH: `${path.join(dir, 'node_modules', '.bin')}:${process.env.PATH}` },
    });
    if (run.status !== 0) throw new Error(`${what} failed in ${dir}`);
  };
  if (!fs.existsSync(path.join(dir, '.built'))) {
    if (!fs.existsSync(dir)) {
      // A worktree directory deleted by hand stays registered until pruned, and add refuses its path.
      git('worktree', 'prune');
      git('worktree', 'add', '--detach', dir, commit);
    }
    step(`installing ${commit.slice(0, 12)}'s dependencies`, 'npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error']);
    step(`building ${commit.slice(0, 12)}`, 'npx', ['tsc', '-b']);
    fs.writeFileSync(path.join(dir, '.built'), `${new Date().toISOString()}\n`);
  }
  return { name: `base ${commit.slice(0, 12)}`, dir };
}

/** One bench:publish run in `tree`, on this checkout's stack; the figures its output prints. */
function benchRun(tree) {
  const run = spawnSync(path.join(tree.dir, 'node_modules', '.bin', 'node'), ['bench/publish.js'], {
    cwd: tree.dir,
    encoding: 'utf8',
    env: { ...process.env, BUS_LOCAL_DIR: path.join(ROOT, '.local') },
  });
  if (run.status !== 0) throw new Error(`bench/publish.js failed in ${tree.dir}:\n${run.stderr}`);
  const out = run.stdout;
  const cpu = /^CPU ms per 1,000 messages — \w+: ([^;]+)/m.exec(out)?.[1] ?? '';
  const perSecond = (row) => Number(new RegExp(`^\\| ${row}[^|]*\\| ([0-9]+) \\|`, 'm').exec(out)?.[1] ?? NaN);
  return {
    publishes: perSecond('POST'),
    raw: perSecond('raw kafkajs'),
    ratio: Number(/^Ratio to the raw producer ceiling: ([0-9.]+)/m.exec(out)?.[1] ?? NaN),
    probe: /^Machine probe: compute ([0-9.]+) CPU µs.*round trip ([0-9]+) µs/m.exec(out)?.slice(1).join(' / ') ?? '–',
    batch: /batch of ([0-9.]+) publishes/.exec(out)?.[1] ?? '–',
    cpu,
    // CPU µs a publish costs every process measured: the cost a change should lower, less at the mercy
    // of the VM's speed than publishes/s. Summed from the per-process line rather than read from
    // publish.js's own total, which base revisions older than b37bb04 do not print.
    cpuTotal: [...cpu.matchAll(/ ([0-9]+)(?:,|$)/g)].reduce((sum, m) => sum + Number(m[1]), 0),
  };
}

function main() {
  const trees = [
    baseTree(baseRev),
    { name: `this checkout (${git('rev-parse', '--short=12', 'HEAD')}${git('status', '--porcelain') ? ', modified' : ''})`, dir: ROOT },
  ];
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`);
  console.log(`bench:publish alternated, ${PAIRS} pairs${settings.length ? `, ${settings.join(' ')}` : ''}\n`);
  console.log(
    '| pair | build | publishes/s | raw ceiling/s | ratio | group commit batch | CPU µs a publish, all processes | CPU ms per 1,000 messages | machine probe: compute / round trip µs |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  const results = trees.map(() => []);
  for (let pair = 1; pair <= PAIRS; pair++) {
    trees.forEach((tree, i) => {
      const r = benchRun(tree);
      results[i].push(r);
      console.log(`| ${pair} | ${tree.name} | ${r.publishes} | ${r.raw} | ${r.ratio} | ${r.batch} | ${r.cpuTotal} | ${r.cpu} | ${r.probe} |`);
    });
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log('');
  trees.forEach((tree, i) => {
    const rs = results[i];
    console.log(
      `${tree.name}: mean ${mean(rs.map((r) => r.publishes)).toFixed(0)} publishes/s, ratio ${mean(rs.map((r) => r.ratio)).toFixed(3)}, ${mean(rs.map((r) => r.cpuTotal)).toFixed(0)} CPU µs a publish`,
    );
  });
  const pairsAheadOn = (figure) => results[1].filter((r, pair) => r[figure] > results[0][pair][figure]).length;
  const cheaperIn = results[1].filter((r, pair) => r.cpuTotal < results[0][pair].cpuTotal).length;
  console.log(
    `this checkout ahead in ${pairsAheadOn('publishes')} of ${PAIRS} pairs on publishes/s, ${pairsAheadOn('ratio')} of ${PAIRS} on the ratio, cheaper in CPU in ${cheaperIn} of ${PAIRS}`,
  );
}

main();
