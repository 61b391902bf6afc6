import { BusProducer, BusUnreachableError, TokenRequestError, TokenSource, type ClientOptions } from '@bus/client';
import { AdminConflictError, AdminRequestInvalidError, PortalBusUnavailableError } from './errors';

/** Where the portal reaches the bus to publish as a producer: its publish routes and its token route (one address in the all-in-one). */
export interface PortalBus {
  gatewayUrl: string;
  authUrl: string;
}

/**
 * The portal publishing as a producer connection, from its page (the simulated producer, a test
 * message): with the connection's own secret, typed by the person, through the bus's own token and
 * publish routes, so what it sends passes every gate like any producer's. The portal holds no key of
 * its own to publish with; the secret is used for the token request only, never stored or logged.
 */
export class ProducerAccess {
  constructor(private readonly bus: PortalBus) {}

  /**
   * A producer client of the connection, once its secret got a token (a wrong one is 400 beside its
   * field; a refusal of another kind 409; the token route unreachable 503). `patience`: the requests
   * made for one call when the bus answers 429 or 503 (the client's retries).
   */
  async producer(clientId: string, clientSecret: string, patience: Pick<ClientOptions, 'maxAttempts'> = { maxAttempts: 3 }): Promise<BusProducer> {
    const options: ClientOptions = { baseUrl: this.bus.gatewayUrl, clientId, clientSecret, fetch: this.routedFetch(), ...patience };
    // The token the check fetches is the one the producer then publishes with: one token request.
    const tokens = new TokenSource(options);
    try {
      await tokens.get();
    } catch (err) {
      if (err instanceof TokenRequestError && err.status === 401)
        throw new AdminRequestInvalidError(`body "client_secret" is not this connection's current secret: the bus's token route refused it (${err.error})`);
      if (err instanceof TokenRequestError) throw new AdminConflictError(`The bus refused the connection a token: ${err.message}`);
      if (err instanceof BusUnreachableError) throw new PortalBusUnavailableError(err);
      throw err;
    }
    return new BusProducer(options, tokens);
  }

  /** The token route goes to the auth service, the rest to the gateway (separate services in Kubernetes). */
  private routedFetch(): typeof fetch {
    const { authUrl } = this.bus;
    return (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      return fetch(url.pathname.startsWith('/v1/oauth/') ? new URL(url.pathname + url.search, authUrl) : url, init);
    };
  }
}
