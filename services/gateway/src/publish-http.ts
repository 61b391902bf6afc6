import { DependencyUnavailableError, HttpError, ViolationsError, type Violation } from '@bus/http';
import { RULES } from '@bus/som';
import { CommitFailedError, MessageIdReusedError, MessageRefusedError, type PublishAnswer } from './publish';

/** A publish's answer over HTTP (docs/api.md#publish-responses): 202 for an accepted message, 200 for a duplicate. */
export interface PublishHttpAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

/**
 * The one translation of a publish's outcome and errors into HTTP (docs/errors.md): the routes answer
 * with it, and the publish's integration tests check what a producer would see through it.
 */
export async function publishOverHttp(publish: Promise<PublishAnswer>): Promise<PublishHttpAnswer> {
  try {
    const answer = await publish;
    return { status: answer.outcome === 'accepted' ? 202 : 200, body: answer.body };
  } catch (err) {
    throw publishHttpError(err);
  }
}

/** A publish's error as the HTTP error the error middleware answers with; any other error as it is. */
function publishHttpError(err: unknown): unknown {
  if (err instanceof MessageRefusedError) return new ViolationsError(refusalStatus(err.violations), err.violations, {}, err.omitted);
  if (err instanceof MessageIdReusedError) return new HttpError(409, 'idempotency.message_id_reused', err.message, 'policy');
  if (err instanceof CommitFailedError) return new PublishUnavailableError(err.cause);
  return err;
}

/**
 * 503 publish.unavailable: nothing was accepted. Logged by this name with the dependency's own failure
 * as its cause (docs/operations.md, dependency outages).
 */
class PublishUnavailableError extends DependencyUnavailableError {
  override readonly name = 'PublishUnavailableError';
  constructor(cause: unknown) {
    super('publish.unavailable', RULES['publish.unavailable'].description, cause);
  }
}

/** The status of a refusal is the catalogue's status of its rules (one step's rules share one). */
function refusalStatus(violations: readonly Violation[]): number {
  return Math.max(...violations.map((v) => (Object.hasOwn(RULES, v.rule) ? RULES[v.rule as keyof typeof RULES].status : 400)));
}
