import type { ApiErrorBody } from './api';
import { printable } from './render';

/** Something wrong with what the operator typed (exit 2, with the command's help). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A UsageError, or node:util parseArgs refusing the command line (an unknown option, a missing value). */
export function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ApiErrorBody).code === 'string' && typeof (body as ApiErrorBody).message === 'string';
}

/** What each refusal means for the operator, where the code alone does not say what to do next. */
const HINTS: Record<string, string> = {
  'admin.unauthorized': 'Check BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET (the operator credentials).',
};

/**
 * A refusal as the lines busctl prints on stderr: the API's code and message (and request id, for the
 * portal's logs), each refused skill instance with its problems for registration.invalid, and when to
 * retry for 429. `text` is the body as received, used when it is not the API's error body (a proxy's
 * page, say).
 */
export function renderApiError(status: number, body: unknown, text: string, retryAfter: string | null): string {
  if (!isErrorBody(body)) {
    const excerpt = printable(text.trim().slice(0, 200));
    return `busctl: the API answered ${status}${excerpt ? `: ${excerpt}` : ''}\n`;
  }
  const lines = [`busctl: the API refused (${status} ${body.code}): ${body.message}${body.request_id ? ` [request ${body.request_id}]` : ''}`];
  const hint = HINTS[body.code];
  if (hint) lines.push(hint);
  if (retryAfter !== null) lines.push(`Retry after ${retryAfter} seconds.`);
  if (body.answer) {
    for (const problem of body.answer.problems) lines.push(`  - ${problem}`);
    for (const instance of body.answer.instances) {
      const name = [instance.instance_label, instance.skill_id].filter(Boolean).join(' ');
      lines.push(`  instance ${instance.index}${name ? ` (${name})` : ''}: ${instance.valid ? 'valid' : 'invalid'}`);
      for (const problem of instance.problems) lines.push(`    - ${problem}`);
    }
  }
  // Messages and problems quote what the operator sent (a skills file's values) and may carry anything.
  return lines.map(printable).join('\n') + '\n';
}
