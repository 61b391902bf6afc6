// How fast this machine is at the moment of a run, in two numbers that do not depend on the bus: the
// VM drifts between patches of very different speed (docs/benchmarks.md, "The machine and its drift"), and a run's figures are only
// comparable with another's when the machine was alike. `compute` is pure CPU work of one thread (a
// SHA-256 and a JSON.parse of a ~2 KB message); `round trip` is a request and its answer between two
// processes over loopback TCP, each waking the other — the step the bus repeats for every statement,
// script call and Kafka request, and on this VM the expensive one.
//
//   node bench/machine-probe.js      prints the probe; bench:publish prints it before each run
'use strict';

const { fork } = require('node:child_process');
const { hash } = require('node:crypto');
const net = require('node:net');
const path = require('node:path');

const COMPUTE_ROUNDS = 5_000;
const ROUND_TRIPS = 5_000;
/** About one Postgres statement out and one short answer back. */
const REQUEST_BYTES = 600;
const ANSWER_BYTES = 64;

/** CPU µs of this thread per call of `work`, over `rounds` calls after a warm-up of a tenth of them. */
function cpuPerCall(rounds, work) {
  for (let i = 0; i < rounds / 10; i++) work();
  const before = process.cpuUsage();
  for (let i = 0; i < rounds; i++) work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / rounds;
}

/** The answering side of the round trips: a child process echoing ANSWER_BYTES per request. */
function servePeer() {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', () => socket.write(Buffer.alloc(ANSWER_BYTES)));
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', () => {
    const used = process.cpuUsage();
    process.send({ cpuMicros: used.user + used.system });
  });
}

function nextMessage(child) {
  return new Promise((resolve) => child.once('message', resolve));
}

/**
 * { computeMicros, roundTripMicros, roundTripCpuMicros: { here, peer } } for a message's bytes (the
 * bench's own message, so compute is measured on what the bus handles).
 */
async function machineProbe(bytes) {
  const text = bytes.toString('utf8');
  const computeMicros = cpuPerCall(COMPUTE_ROUNDS, () => {
    hash('sha256', bytes);
    JSON.parse(text);
  });

  const peer = fork(path.join(__dirname, 'machine-probe.js'), ['peer'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const { port } = await nextMessage(peer);
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const request = Buffer.alloc(REQUEST_BYTES, 1);
    const roundTrip = () =>
      new Promise((resolve) => {
        socket.once('data', resolve);
        socket.write(request);
      });
    for (let i = 0; i < ROUND_TRIPS / 10; i++) await roundTrip();
    peer.send('cpu');
    const peerBefore = (await nextMessage(peer)).cpuMicros;
    const hereBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    for (let i = 0; i < ROUND_TRIPS; i++) await roundTrip();
    const wallMicros = Number(process.hrtime.bigint() - started) / 1e3;
    const here = process.cpuUsage(hereBefore);
    peer.send('cpu');
    const peerAfter = (await nextMessage(peer)).cpuMicros;
    socket.destroy();
    return {
      computeMicros,
      roundTripMicros: wallMicros / ROUND_TRIPS,
      roundTripCpuMicros: { here: (here.user + here.system) / ROUND_TRIPS, peer: (peerAfter - peerBefore) / ROUND_TRIPS },
    };
  } finally {
    peer.kill();
  }
}

/** The probe as one line of a bench's output. */
function probeLine(p) {
  return (
    `Machine probe: compute ${p.computeMicros.toFixed(1)} CPU µs (SHA-256 + JSON.parse of the message); ` +
    `loopback round trip ${p.roundTripMicros.toFixed(0)} µs, ${p.roundTripCpuMicros.here.toFixed(0)} + ${p.roundTripCpuMicros.peer.toFixed(0)} CPU µs (caller + peer)`
  );
}

module.exports = { machineProbe, probeLine };

if (require.main === module) {
  if (process.argv[2] === 'peer') servePeer();
  else {
    const { storyMessage } = require('./support');
    machineProbe(storyMessage('probe').body).then((p) => console.log(probeLine(p)));
  }
}
