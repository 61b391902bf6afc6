// Shared by the benchmarks: the local stack's addresses and a fixed-concurrency driver.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** Reads .local/stack.env (written by deploy/local/stack.sh up) into process.env, unless already set. */
function loadStackEnv() {
  const file = path.join(__dirname, '..', '.local', 'stack.env');
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (m && process.env[m[1]] === undefined) process.env[m[1]] = m[2];
    }
  }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS']) {
    if (!process.env[name]) throw new Error(`${name} is not set: start the local stack (bash deploy/local/stack.sh up)`);
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs `operation(i)` from `concurrency` workers, each starting the next as soon as one finishes:
 * a warm-up whose results are dropped, then `runMs` measured. `operation` resolves true on success.
 * Returns successes per second and latency percentiles (ms) of the successes.
 */
async function measure({ concurrency, warmUpMs, runMs, operation }) {
  const latencies = [];
  let failures = 0;
  let recording = false;
  let stopAt = Date.now() + warmUpMs;
  let next = 0;
  const worker = async () => {
    while (Date.now() < stopAt) {
      const started = process.hrtime.bigint();
      const ok = await operation(next++);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (!recording) continue;
      if (ok) latencies.push(ms);
      else failures += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  recording = true;
  const began = Date.now();
  stopAt = began + runMs;
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (Date.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    count: latencies.length,
    failures,
  };
}

/** The machine line every benchmark prints with its figures. */
function machine() {
  const os = require('node:os');
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

module.exports = { loadStackEnv, measure, machine };
