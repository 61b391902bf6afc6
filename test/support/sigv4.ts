import { randomUUID } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface SignOptions {
  region?: string;
  service?: string;
  signingDate?: Date;
  headers?: Record<string, string>;
  sessionToken?: string;
}

/**
 * Signs a JSON POST to `url` with the AWS SDK's own signer (@smithy/signature-v4), as a client would,
 * and returns the headers to send. Region us-east-1 (the bus's default AWS_SIGV4_REGION) unless given.
 */
export async function signPost(url: URL, credentials: SigV4Credentials, body: string, options: SignOptions = {}): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    credentials: { ...credentials, ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) },
    region: options.region ?? 'us-east-1',
    service: options.service ?? 'execute-api',
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign(
    // A unique X-Request-Id is signed too: two requests alike within one second still differ (docs/auth.md).
    { method: 'POST', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers: { host: url.host, 'content-type': 'application/json', 'x-request-id': randomUUID(), ...options.headers }, body },
    options.signingDate ? { signingDate: options.signingDate } : {},
  );
  // fetch sends Host itself, the same value that was signed.
  const { host: _host, ...headers } = signed.headers;
  return headers;
}
