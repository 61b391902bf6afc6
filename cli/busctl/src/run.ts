import type { Replay } from './api';
import { parseCommandLine } from './args';
import type { ApiRequest } from './commands';
import { portalFrom, type Portal } from './config';
import { renderApiError, UsageError } from './errors';
import { runSimulate } from './simulate';
import { runTestRuns } from './test-runs';
import { runStory } from './story';
import { runValidate, type ValidateIo } from './validate';

/** Everything busctl does to the outside world, passed in so the whole run is tested without a server. */
export type Io = ValidateIo;

interface Answer {
  status: number;
  /** The parsed JSON body; null for none (204) or for a body that is not JSON. */
  body: unknown;
  text: string;
  retryAfter: string | null;
}

const REPLAY_POLL_MS = 1000;

/** Retry-After in seconds (the API sends seconds); a date or nonsense waits one poll interval. */
function retryDelayMs(retryAfter: string | null): number {
  const seconds = Number(retryAfter);
  return retryAfter !== null && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : REPLAY_POLL_MS;
}

async function send(io: Io, portal: Portal, request: ApiRequest, file: Uint8Array | undefined): Promise<Answer> {
  const url = new URL(portal.adminUrl + request.path);
  for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { authorization: portal.authorization, accept: 'application/json' };
  let body: string | Uint8Array | undefined;
  if (request.file && file) {
    headers['content-type'] = request.file.contentType;
    body = file;
  } else if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  }
  // A redirect is answered, not followed: following it could carry the operator's credentials elsewhere.
  const res = await io.fetch(url, { method: request.method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // Not the API's JSON (a proxy's error page, say): renderApiError quotes the text instead.
  }
  return { status: res.status, body: parsed, text, retryAfter: res.headers.get('retry-after') };
}

const succeeded = (answer: Answer): boolean => answer.status >= 200 && answer.status < 300;

/** busctl with `argv` (after the program name): prints what it has to say and gives the exit code. */
export async function run(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  // A producer's command: many calls of the bus's validate route with a producer connection, not one admin API call.
  if (argv[0] === 'validate') return runValidate(argv.slice(1), env, io);
  // Also a producer's: generated stories published through a producer connection.
  if (argv[0] === 'simulate') return runSimulate(argv.slice(1), env, io);
  // A tester's: test runs and their reports, with a connection of the workspace.
  if (argv[0] === 'run') return runTestRuns(argv.slice(1), env, io);
  // And the export of what a story exchanged, read with a producer connection.
  if (argv[0] === 'story') return runStory(argv.slice(1), env, io);
  const invocation = parseCommandLine(argv, io.now());
  if (invocation.kind === 'help') {
    io.stdout(invocation.text);
    return 0;
  }
  if (invocation.kind === 'usage') {
    io.stderr(`busctl: ${invocation.message}\n\n${invocation.help}`);
    return 2;
  }
  const { plan, json } = invocation;
  let portal: Portal;
  let file: Uint8Array | undefined;
  try {
    portal = portalFrom(env, invocation.url);
    if (plan.request.file) {
      const path = plan.request.file.path;
      file = await io.readFile(path).catch((err: Error) => {
        throw new UsageError(`cannot read ${path}: ${err.message}`);
      });
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`busctl: ${err.message}\n`);
    return 2;
  }

  const refuse = (answer: Answer): number => {
    if (json && answer.body !== null) io.stdout(`${JSON.stringify(answer.body, null, 2)}\n`);
    else io.stderr(renderApiError(answer.status, answer.body, answer.text, answer.retryAfter));
    return 1;
  };

  let answer: Answer;
  try {
    answer = await send(io, portal, plan.request, file);
    if (!succeeded(answer)) return refuse(answer);
    if (plan.awaitReplay) {
      let replay = answer.body as Replay;
      io.stderr(`Replay ${replay.replay_id} started; waiting until it ends (Ctrl-C stops the waiting, not the replay).\n`);
      while (replay.status === 'running') {
        await io.sleep(REPLAY_POLL_MS);
        const polled = await send(io, portal, { method: 'GET', path: `/replays/${encodeURIComponent(replay.replay_id)}` }, undefined);
        if (polled.status === 429) {
          await io.sleep(retryDelayMs(polled.retryAfter));
          continue;
        }
        if (!succeeded(polled)) return refuse(polled);
        replay = polled.body as Replay;
        answer = polled;
      }
    }
    if (plan.pages) {
      const bodies = [answer.body];
      let next = plan.pages.next(answer.body);
      while (next !== undefined) {
        const page = await send(io, portal, next, undefined);
        if (page.status === 429) {
          await io.sleep(retryDelayMs(page.retryAfter));
          continue;
        }
        // What earlier pages did stands (and a redrive asked again is harmless): the refusal is what to say.
        if (!succeeded(page)) return refuse(page);
        bodies.push(page.body);
        next = plan.pages.next(page.body);
      }
      answer = { ...answer, body: plan.pages.merge(bodies) };
    }
  } catch (err) {
    const cause = (err as { cause?: Error }).cause;
    io.stderr(`busctl: cannot reach the portal at ${portal.adminUrl}: ${cause?.message ?? (err as Error).message}\n`);
    return 1;
  }

  if (json) {
    if (answer.body !== null) io.stdout(`${JSON.stringify(answer.body, null, 2)}\n`);
    if (plan.note) io.stderr(`${plan.note}\n`);
  } else {
    io.stdout(plan.render(answer.body) + (plan.note ? `\n${plan.note}\n` : ''));
  }
  const failure = plan.failure?.(answer.body);
  if (failure !== undefined) {
    io.stderr(`busctl: ${failure}\n`);
    return 1;
  }
  return 0;
}
