// The benches' HTTP/1.1 client: keep-alive connections on plain sockets, one request at a time on
// each, a connection per call in flight.
//
// The bench shares the machine's two cores with the bus, so what its client costs is taken from the
// bus being measured. node:http's client cost the bench ~95–170 CPU µs a publish (an agent, a
// ClientRequest and an IncomingMessage stream per call); this one writes each request in one write
// and parses the answer's head itself (docs/benchmarks.md, "The bench's own HTTP client"). It is a load
// generator, not a general client: http: only, answers framed by Content-Length or chunked (or
// without a body: 1xx, 204, 304), anything else is an error.
'use strict';

const net = require('node:net');

const HEAD_END = Buffer.from('\r\n\r\n');

/** One keep-alive socket; `send` writes a request and resolves with its answer. */
class Connection {
  constructor(host, port, onIdle, onGone) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.pending = null;
    this.buffered = null;
    this.onIdle = onIdle;
    this.onGone = onGone;
    this.socket.on('data', (chunk) => this.receive(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  send(request) {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(request);
    });
  }

  receive(chunk) {
    this.buffered = this.buffered === null ? chunk : Buffer.concat([this.buffered, chunk]);
    if (this.pending === null) {
      this.fail(new Error('bytes from the server with no request outstanding'));
      return;
    }
    let answer;
    try {
      answer = parseAnswer(this.buffered);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (answer === null) return;
    const { resolve } = this.pending;
    this.pending = null;
    this.buffered = null;
    if (answer.close) {
      this.gone();
      this.socket.end();
    } else {
      this.onIdle(this);
    }
    resolve({ status: answer.status, headers: answer.headers, body: answer.body });
  }

  fail(err) {
    this.gone();
    this.socket.destroy();
    if (this.pending !== null) {
      const { reject } = this.pending;
      this.pending = null;
      reject(err);
    }
  }

  gone() {
    if (this.onGone !== null) this.onGone(this);
    this.onGone = null;
  }
}

/** The answer at the start of `bytes` once all of it has arrived, else null. */
function parseAnswer(bytes) {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const lines = bytes.toString('latin1', 0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(lines[0])}`);
  const headers = {};
  for (let i = 1; i < lines.length; i += 1) {
    const colon = lines[i].indexOf(':');
    headers[lines[i].slice(0, colon).trim().toLowerCase()] = lines[i].slice(colon + 1).trim();
  }
  const start = headEnd + HEAD_END.length;
  const close = headers.connection?.toLowerCase() === 'close';
  if (status < 200 || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), close };
  if (headers['content-length'] !== undefined) {
    const end = start + Number(headers['content-length']);
    if (bytes.length < end) return null;
    if (bytes.length > end) throw new Error('more bytes than the answer holds (pipelining is not used)');
    return { status, headers, body: bytes.subarray(start, end), close };
  }
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const body = dechunk(bytes, start);
    return body === null ? null : { status, headers, body, close };
  }
  throw new Error(`an answer (${status}) framed by neither Content-Length nor chunked`);
}

/** The body of a chunked answer starting at `offset`, or null while the last chunk has not arrived. */
function dechunk(bytes, offset) {
  const chunks = [];
  let at = offset;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return null;
    const size = parseInt(bytes.toString('latin1', at, lineEnd), 16);
    if (!Number.isInteger(size)) throw new Error('a malformed chunk size');
    if (size === 0) return bytes.indexOf(HEAD_END, lineEnd) === lineEnd ? Buffer.concat(chunks) : null;
    const end = lineEnd + 2 + size;
    if (bytes.length < end + 2) return null;
    chunks.push(bytes.subarray(lineEnd + 2, end));
    at = end + 2;
  }
}

/**
 * `request(url, { method, headers, body })` → `{ status, headers, body }` (body a Buffer), rejecting on
 * a network failure. Idle connections are kept per origin and reused.
 */
function httpClient() {
  const idle = new Map();
  const targets = new Map();
  const targetOf = (url) => {
    let target = targets.get(url);
    if (target === undefined) {
      const u = new URL(url);
      if (u.protocol !== 'http:') throw new Error(`the bench client speaks http: only, not ${u.protocol}`);
      target = { origin: u.host, host: u.hostname, port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
      targets.set(url, target);
    }
    return target;
  };
  const connectionTo = (target) => {
    const free = idle.get(target.origin);
    if (free !== undefined && free.length > 0) return free.pop();
    const connection = new Connection(
      target.host,
      target.port,
      (c) => {
        const list = idle.get(target.origin) ?? [];
        list.push(c);
        idle.set(target.origin, list);
      },
      (c) => {
        const list = idle.get(target.origin);
        const at = list?.indexOf(c) ?? -1;
        if (at >= 0) list.splice(at, 1);
      },
    );
    return connection;
  };
  return (url, { method = 'GET', headers = {}, body } = {}) => {
    const target = targetOf(url);
    let head = `${method} ${target.path} HTTP/1.1\r\nHost: ${target.origin}\r\n`;
    for (const name of Object.keys(headers)) head += `${name}: ${headers[name]}\r\n`;
    if (body !== undefined) head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    head += '\r\n';
    const request = body === undefined ? head : typeof body === 'string' ? head + body : Buffer.concat([Buffer.from(head, 'latin1'), body]);
    return connectionTo(target).send(request);
  };
}

module.exports = { httpClient };
