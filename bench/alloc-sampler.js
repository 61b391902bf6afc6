'use strict';
/**
 * Preloaded into each bus process by bench:publish with BENCH_ALLOC=<dir> (`--require`, the directory
 * in BENCH_ALLOC_DIR): the first SIGUSR2 starts sampling what the process allocates — including what
 * the garbage collector has already taken back, which `node --heap-prof` leaves out (it keeps what is
 * still live) — and the second stops and writes `<dir>/alloc-<pid>.heapprofile` (Chrome DevTools'
 * Memory tab opens it; bench/alloc-summary.js prints who allocated most). Garbage is what paces the
 * scavenges and major collections that perf shows as garbage-collector time.
 */
const fs = require('node:fs');
const path = require('node:path');
const { Session } = require('node:inspector');

const dir = process.env.BENCH_ALLOC_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  let sampling = false;
  process.on('SIGUSR2', () => {
    sampling = !sampling;
    const step = sampling
      ? // One sample per 16 KiB allocated on average (V8's default is 32 KiB): enough for a 10 s phase.
        post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
      : post('HeapProfiler.stopSampling').then(({ profile }) => {
          const file = path.join(dir, `alloc-${process.pid}.heapprofile`);
          fs.writeFileSync(`${file}.part`, JSON.stringify(profile));
          fs.renameSync(`${file}.part`, file);
        });
    step.catch((err) => process.stderr.write(`alloc-sampler: ${err.message}\n`));
  });
}
