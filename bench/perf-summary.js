// Summarises a `perf record` of the machine over a bench's measured phase (BENCH_PERF=<dir> with
// bench:publish): per process of the run, its share of the machine's busy samples and where they went
// — JavaScript by V8 tier, V8's builtins and runtime, the garbage collector, the JIT compiler's
// threads, libc's memory functions, node's own native code, the kernel — then its busiest symbols.
//
// Why perf as well as V8's profile (BENCH_CPU_PROF): V8's sampler takes a sample per wall-clock tick
// and records it when the thread next runs JavaScript, so the time a thread spends preempted inside a
// socket write (the scheduler runs the woken peer first, on this 2-vCPU VM often) is counted to that
// write. perf samples the CPU: a thread that is not running is not sampled. In one bench delivery's
// `writev` was 27.7 % of V8's samples and all its kernel time 4–10 % of perf's (docs/benchmarks.md,
// "What V8's profile overstates").
//
//   node bench/perf-summary.js <dir>/<phase>.perf.data [top=12]
//
// Needs `perf` (linux-perf) and the bus processes' JIT maps (/tmp/perf-<pid>.map, written because
// BENCH_PERF runs them with --perf-basic-prof); without the maps JavaScript shows as "[unknown]".
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

const [file, topArg = '12'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/perf-summary.js <dir>/<phase>.perf.data [top]\n');
  process.exit(2);
}
const TOP = Number(topArg);
const rolePids = JSON.parse(fs.readFileSync(file.replace(/\.perf\.data$/, '.roles.json'), 'utf8'));
const roleOf = new Map(Object.entries(rolePids).flatMap(([name, pids]) => pids.map((pid) => [pid, name])));

/** V8 marks a JIT'd function's tier in its perf map name: ~ interpreted, ^ Sparkplug, + Maglev, * TurboFan. */
const TIERS = { '~': 'JS, interpreted', '^': 'JS, Sparkplug', '+': 'JS, Maglev', '*': 'JS, TurboFan' };
const KINDS = [
  [
    'garbage collector',
    /Scaveng|SemiSpace|Marking|Sweep|MarkCompact|ArrayBufferSweeper|RememberedSet|FreeList|Evacuat|GCTracer|BodyDescriptor|Heap::|HeapObject::SizeFromMap/,
  ],
  ['JIT compiler', /v8::internal::(compiler|maglev|baseline)::|Zone/],
  ['V8 builtins', /^Builtins_|^RegExp\./],
  ['V8 runtime', /v8::internal::|v8::|absl::/],
  ['libc memory', /malloc|free|memmove|memset|memcpy|memcmp|_int_|unlink_chunk/],
];

function kindOf(symbol, dso) {
  if (dso === '[kernel.kallsyms]') return 'kernel';
  const js = /^JS:(.)/.exec(symbol);
  if (js) return TIERS[js[1]] ?? 'JS, other';
  // Code a JIT made without a perf map: the JVM's (Kafka), or a process not started with --perf-basic-prof.
  if (symbol === '[unknown]' && /^\/tmp\/perf-\d+\.map$|^\[JIT\]/.test(dso)) return 'JIT code, unnamed';
  for (const [kind, pattern] of KINDS) if (pattern.test(symbol)) return kind;
  return 'native, other';
}

// One line per sample: pid, symbol, (dso). perf prints a symbol it cannot name as [unknown].
const script = execFileSync('perf', ['script', '-i', file, '-F', 'pid,ip,sym,dso'], {
  encoding: 'utf8',
  maxBuffer: 1 << 30,
  stdio: ['ignore', 'pipe', 'ignore'],
});
const byRole = new Map();
let busy = 0;
for (const line of script.split('\n')) {
  const m = /^\s*(\d+)\s+\S+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line);
  if (!m) continue;
  const [, pidText, rawSymbol, dso] = m;
  const pid = Number(pidText);
  if (pid === 0) continue; // the idle task
  busy += 1;
  const symbol = rawSymbol.replace(/\+0x[0-9a-f]+$/, '');
  const role = roleOf.get(pid) ?? 'other processes';
  if (!byRole.has(role)) byRole.set(role, { samples: 0, kinds: new Map(), symbols: new Map() });
  const r = byRole.get(role);
  r.samples += 1;
  const kind = kindOf(symbol, dso);
  r.kinds.set(kind, (r.kinds.get(kind) ?? 0) + 1);
  r.symbols.set(symbol, (r.symbols.get(symbol) ?? 0) + 1);
}

const pct = (n, of) => `${((100 * n) / of).toFixed(1)} %`;
const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);
console.log(`${busy} busy samples (the idle task left out), by process of the run\n`);
console.log('| process | share of the busy samples | where its samples went |');
console.log('|---|---|---|');
const roles = [...byRole].sort((a, b) => b[1].samples - a[1].samples);
for (const [role, { samples, kinds }] of roles) {
  console.log(
    `| ${role} | ${pct(samples, busy)} | ${sorted(kinds)
      .map(([kind, n]) => `${kind} ${pct(n, samples)}`)
      .join(', ')} |`,
  );
}
for (const [role, { samples, symbols }] of roles) {
  if (samples < busy / 50) continue;
  console.log(`\n${role}, busiest symbols (share of its samples):`);
  for (const [symbol, n] of sorted(symbols).slice(0, TOP)) console.log(`  ${pct(n, samples).padStart(7)}  ${symbol.slice(0, 140)}`);
}
