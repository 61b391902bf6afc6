import { randomUUID } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved } from '@bus/testing';
import type { RunningBus } from './bus';

const busApi = createOpenApiChecker(openapi.bus);
const adminApi = createOpenApiChecker(openapi.admin);

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface IssuedPrincipal extends Credentials {
  clientId: string;
}

export interface SignOptions {
  region: string;
  service?: string;
  signingDate?: Date;
  headers?: Record<string, string>;
  sessionToken?: string;
}

/** Signs a POST to the bus with the AWS SDK's signer as a client would (never a hand-written one), and returns the headers to send. */
export async function signedHeaders(
  bus: RunningBus,
  credentials: Credentials,
  path: string,
  body: string,
  options: SignOptions,
): Promise<Record<string, string>> {
  const url = new URL(`${bus.busUrl}${path}`);
  const signer = new SignatureV4({
    credentials: { ...credentials, ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) },
    region: options.region,
    service: options.service ?? 'execute-api',
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign(
    // A unique X-Request-Id, signed too, tells two requests alike within one second apart in the logs.
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/json', 'x-request-id': randomUUID(), ...options.headers },
      body,
    },
    options.signingDate ? { signingDate: options.signingDate } : {},
  );
  // fetch sends Host itself, the same value that was signed.
  const { host: _host, ...headers } = signed.headers;
  return headers;
}

/**
 * AWS principals as an operator and their holder make them: registered and challenged through the
 * admin API, verified on principals/verify signed by the principal; every answer checked against
 * the admin and bus OpenAPI documents.
 */
export class PrincipalFixture {
  private readonly operatorAuth: string;

  constructor(
    private readonly bus: RunningBus,
    private readonly region: string,
    private readonly roleArn: string,
  ) {
    this.operatorAuth = `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`;
  }

  async admin(method: string, path: string, body?: unknown) {
    const response = await fetchObserved(`${this.bus.portalUrl}${path}`, {
      method,
      headers: { Authorization: this.operatorAuth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    adminApi.check(method, path, response);
    return response;
  }

  async register(clientId: string): Promise<IssuedPrincipal> {
    const res = await this.admin('POST', `/api/admin/connections/${clientId}/principals`, { role_arn: this.roleArn });
    expect(res.status).toBe(201);
    const body = res.body as { access_key_id: string; secret_access_key: string };
    return { clientId, accessKeyId: body.access_key_id, secretAccessKey: body.secret_access_key };
  }

  async challenge(principal: IssuedPrincipal): Promise<string> {
    const res = await this.admin('POST', `/api/admin/connections/${principal.clientId}/principals/${principal.accessKeyId}/challenge`);
    expect(res.status).toBe(201);
    return (res.body as { challenge: string }).challenge;
  }

  /** A new principal of `clientId`, verified with its challenge. */
  async verified(clientId: string, workspaceId: string): Promise<IssuedPrincipal> {
    const principal = await this.register(clientId);
    const path = `/v1/tenants/${workspaceId}/principals/verify`;
    const body = JSON.stringify({ challenge: await this.challenge(principal) });
    const res = await fetchObserved(`${this.bus.busUrl}${path}`, {
      method: 'POST',
      headers: await signedHeaders(this.bus, principal, path, body, { region: this.region }),
      body,
    });
    busApi.check('POST', path, res);
    expect(res.status).toBe(200);
    return principal;
  }
}
