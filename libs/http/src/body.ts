import type { Request } from 'express';
import { MalformedRequestError, MessageTooLargeError } from './errors';

/**
 * Reads a request body up to `limitBytes`. A declared Content-Length over the limit is refused before
 * a single byte is read; a body without one (chunked) is cut at the first byte over the limit.
 * Either way the connection is closed afterwards, so the unread rest never reaches a later request.
 */
export async function readBody(req: Request, limitBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) {
    refuseRest(req);
    throw new MessageTooLargeError(limitBytes);
  }
  // The route got this far (authenticated, within its limits, a length it takes): now the client may send.
  if (awaitingContinue.delete(req) && req.res && !req.res.headersSent) req.res.writeContinue();
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > limitBytes) {
        refuseRest(req);
        throw new MessageTooLargeError(limitBytes);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof MessageTooLargeError) throw err;
    // The body broke off: the client went away, or the parser refused its framing (then the
    // server's clientError handler has already answered). The client's fault, not a 500.
    throw new MalformedRequestError('the body could not be read to its end');
  }
  return Buffer.concat(chunks, received);
}

/**
 * Requests sent with `Expect: 100-continue` whose `100 Continue` is not yet written. Node would write
 * it on arrival, before authentication and limits; the server (server.ts) holds it back, and the first
 * read of the body writes it, so a refused client never starts uploading.
 */
const awaitingContinue = new WeakSet<object>();

export function holdContinue(req: object): void {
  awaitingContinue.add(req);
}

function refuseRest(req: Request): void {
  req.res?.setHeader('Connection', 'close');
  req.pause();
}
