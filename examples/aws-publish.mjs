// Publishes a SOM 1.0 message to the bus signed with AWS SigV4 by an AWS principal the operator
// registered on a producer connection (docs/auth.md, "AWS SigV4"); also answers its challenge.
//
//   node examples/aws-publish.mjs verify <challenge>     # once: POST …/principals/verify
//   node examples/aws-publish.mjs publish [file]         # POST …/iam/messages (the message from file, else stdin)
//   node examples/aws-publish.mjs validate [file]        # POST …/iam/validate: every check, nothing published
//
// Prints the bus's JSON answer and its HTTP status; exits 1 unless the status is 2xx.
// Environment: BUS_BASE_URL, BUS_WORKSPACE_ID, BUS_ACCESS_KEY_ID, BUS_SECRET_ACCESS_KEY (the principal's
// keys, from `busctl principal add`), AWS_REGION (the bus's AWS_SIGV4_REGION; default us-east-1).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { requiredEnv } from './env.mjs';

const env = requiredEnv('aws-publish', ['BUS_BASE_URL', 'BUS_WORKSPACE_ID', 'BUS_ACCESS_KEY_ID', 'BUS_SECRET_ACCESS_KEY']);
const [action, argument] = process.argv.slice(2);
const routes = { verify: 'principals/verify', publish: 'iam/messages', validate: 'iam/validate' };
if (!(action in routes) || (action === 'verify' && !argument)) {
  process.stderr.write('usage: aws-publish.mjs verify <challenge> | publish [file] | validate [file]\n');
  process.exit(2);
}
// The message's bytes as they are: the bus signs over them and consumers receive exactly them.
const body = action === 'verify' ? JSON.stringify({ challenge: argument }) : readFileSync(argument ?? 0);

const signer = new SignatureV4({
  credentials: { accessKeyId: env.BUS_ACCESS_KEY_ID, secretAccessKey: env.BUS_SECRET_ACCESS_KEY },
  region: process.env.AWS_REGION || 'us-east-1',
  service: 'execute-api',
  sha256: Hash.bind(null, 'sha256'),
});
const url = new URL(`${env.BUS_BASE_URL}/v1/tenants/${env.BUS_WORKSPACE_ID}/${routes[action]}`);
const signed = await signer.sign({
  method: 'POST',
  protocol: url.protocol,
  hostname: url.hostname,
  port: Number(url.port) || undefined,
  path: url.pathname,
  query: {},
  // A unique X-Request-Id, signed too, lets the bus's logs tell two requests alike within one second apart.
  headers: { host: url.host, 'content-type': 'application/json', 'x-request-id': randomUUID() },
  body,
});
const { host: _host, ...headers } = signed.headers; // fetch sends the same Host itself
const res = await fetch(url, { method: 'POST', headers, body });
process.stdout.write(`${await res.text()} ${res.status}\n`);
process.exitCode = res.ok ? 0 : 1;
