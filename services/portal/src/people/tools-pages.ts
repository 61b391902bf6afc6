import type { Router, Request } from 'express';
import type { RecentRefusals } from '@bus/db';
import type { MessageTrace } from '@bus/queue';
import type { ConnectionView, ReplayView } from '../admin-store';
import type { QueueView } from '../consumer-queues';
import { AdminRequestInvalidError } from '../errors';
import { esc, sendPage } from './pages';
import { sessionOf } from './sign-in';
import type { ToolsData } from './tools-data';
import { createRouter } from '@bus/http';

const WORKSPACE_ID = /^w[a-z2-7]{12}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How often the replay page's script asks for the replay's progress while it runs. */
const REPLAY_POLL_MS = 1000;

/**
 * The pages of a connection (a consumer's queue and replay, a producer's recent refusals), of a replay's
 * progress and of the message trace (docs/portal.md). Server-rendered from ToolsData, so a page shows
 * exactly what the portal API would answer and offers only what the server would accept.
 */
export function toolsPages(deps: { tools: ToolsData }): Router {
  const router = createRouter();

  router.get('/portal/connections/:c', async (req, res) => {
    const session = sessionOf(res);
    if (!session) return res.redirect(303, '/portal');
    const { connection, target } = await deps.tools.connection(session, 'connection.read', String(req.params.c));
    const heading = `<h1>Connection <code>${connection.client_id}</code> <small>(${connection.kind}, ${connection.status})</small></h1>
<p>App <code>${connection.app_id}</code> in workspace <a href="/portal/workspaces/${connection.workspace_id}"><code>${connection.workspace_id}</code></a>.</p>`;
    if (connection.kind === 'producer') {
      sendPage(res, `Connection ${connection.client_id}`, session, `${heading}\n${refusalsSection(await deps.tools.refusals(session, connection.client_id))}`);
      return;
    }
    const replay = deps.tools.may(session, 'connection.replay', target) && connection.status === 'active' ? replayForm(connection, deps.tools.archiveMs) : '';
    sendPage(
      res,
      `Connection ${connection.client_id}`,
      session,
      `${heading}\n${queueSection(await deps.tools.queue(session, connection.client_id))}\n${replay}`,
    );
  });

  router.get('/portal/replays/:p', async (req, res) => {
    const session = sessionOf(res);
    if (!session) return res.redirect(303, '/portal');
    const replay = await deps.tools.replay(session, String(req.params.p));
    sendPage(res, `Replay ${replay.replay_id}`, session, replaySection(replay));
  });

  router.get('/portal/trace', async (req, res) => {
    const session = sessionOf(res);
    if (!session) return res.redirect(303, '/portal');
    const asked = traceQuery(req);
    const workspaces = await deps.tools.traceableWorkspaces(session);
    const options = workspaces
      .map((w) => `<option value="${w.id}"${w.id === asked?.workspaceId ? ' selected' : ''}>${esc(w.name)} (${w.id})</option>`)
      .join('');
    const form = `<h1>Message trace</h1>
<p>Where an accepted message is, for each consumer connection of its workspace. No message body is shown.</p>
<form method="get" action="/portal/trace"><label for="trace-workspace">Workspace</label><select id="trace-workspace" name="workspace">${options}</select>
<label for="trace-message-id">Message id</label><input id="trace-message-id" name="message_id" size="38" required value="${esc(asked?.messageId ?? '')}">
<button type="submit">Trace</button></form>`;
    const result = asked ? traceSection(await deps.tools.trace(session, asked.workspaceId, asked.messageId)) : '';
    sendPage(res, 'Message trace', session, `${form}\n${result}`);
  });
  return router;
}

/** The trace page's query: none (the empty form), or a workspace and message id of their forms (else 400). */
function traceQuery(req: Request): { workspaceId: string; messageId: string } | undefined {
  const { workspace, message_id: messageId } = req.query;
  if (workspace === undefined && messageId === undefined) return undefined;
  if (typeof workspace !== 'string' || !WORKSPACE_ID.test(workspace))
    throw new AdminRequestInvalidError('workspace must be a workspace id (w and 12 characters)');
  if (typeof messageId !== 'string' || !UUID.test(messageId.trim())) throw new AdminRequestInvalidError('message_id must be the UUID the producer published');
  return { workspaceId: workspace, messageId: messageId.trim().toLowerCase() };
}

function queueSection(queue: QueueView): string {
  return `<section aria-labelledby="queue-heading"><h2 id="queue-heading">Queue</h2>
<table><caption>Queue of ${queue.client_id}</caption><tbody>
<tr><th scope="row">Depth (not yet acked)</th><td>${queue.depth}</td></tr>
<tr><th scope="row">In flight (leased)</th><td>${queue.in_flight}</td></tr>
<tr><th scope="row">Dead letters</th><td>${queue.dead_letters}</td></tr>
<tr><th scope="row">Oldest age</th><td>${queue.oldest_age_seconds === null ? 'nothing waiting' : `${Math.round(queue.oldest_age_seconds)} s`}</td></tr>
</tbody></table><p><a href="/portal/connections/${queue.client_id}">Refresh</a></p></section>`;
}

/** The replay form: the time is the browser's local time, sent as an instant; the server checks it is within the archive. */
function replayForm(connection: ConnectionView, archiveMs: number): string {
  const days = Math.round(archiveMs / 86_400_000);
  return `<section aria-labelledby="replay-heading"><h2 id="replay-heading">Replay</h2>
<p>Delivers again every archived message of the workspace published at or after the time you choose (your time zone). The archive keeps ${days} days; a time before it or in the future is refused.</p>
<form data-api="/api/portal/connections/${connection.client_id}/replays" data-next="/portal/replays/{replay_id}"><label for="replay-since">Replay from</label><input id="replay-since" name="since" type="datetime-local" step="1" required><button type="submit">Start replay</button></form></section>`;
}

function replaySection(replay: ReplayView): string {
  const field = (name: keyof ReplayView, value: string | number | null) => `<td data-field="${name}">${esc(String(value ?? ''))}</td>`;
  return `<h1>Replay <code>${replay.replay_id}</code></h1>
<p>Of consumer <a href="/portal/connections/${replay.client_id}"><code>${replay.client_id}</code></a>, from ${replay.since}. This page follows it while it runs; <a href="/portal/replays/${replay.replay_id}">refresh</a> if it does not.</p>
<table data-poll="/api/portal/replays/${replay.replay_id}" data-poll-while="status=running" data-poll-ms="${REPLAY_POLL_MS}"><caption>Progress</caption><tbody>
<tr><th scope="row">State</th>${field('status', replay.status)}</tr>
<tr><th scope="row">Scanned</th>${field('scanned', replay.scanned)}</tr>
<tr><th scope="row">Replayed</th>${field('replayed', replay.replayed)}</tr>
<tr><th scope="row">Skipped (never accepted)</th>${field('skipped', replay.skipped)}</tr>
<tr><th scope="row">Requested</th>${field('requested_at', replay.requested_at)}</tr>
<tr><th scope="row">Finished</th>${field('finished_at', replay.finished_at)}</tr>
<tr><th scope="row">Error</th>${field('error', replay.error)}</tr>
</tbody></table>`;
}

function traceSection(trace: MessageTrace): string {
  const rows = trace.deliveries.map(
    (d) =>
      `<tr><td><code>${d.consumer_id}</code></td><td>${d.connection_status}</td><td>${d.state}</td><td>${d.enqueued_at ?? ''}</td><td>${d.visible_at ?? ''}</td><td>${d.receive_count}</td><td>${d.acked_at ?? ''}</td><td>${d.nack_count}</td><td>${d.dead_letter ? `${d.dead_letter.dead_lettered_at} ${d.dead_letter.resolution ?? 'open'}` : ''}</td></tr>`,
  );
  return `<section aria-labelledby="trace-heading"><h2 id="trace-heading">Message <code>${trace.message_id}</code></h2>
<p>${esc(trace.message_type)}, correlation id <code>${esc(trace.correlation_id)}</code>, published by <code>${trace.producer_connection_id}</code>, accepted ${trace.accepted_at} (partition ${trace.kafka.partition}, offset ${trace.kafka.offset}).</p>
<table><caption>Delivery to each consumer connection</caption><thead><tr><th scope="col">Consumer</th><th scope="col">Connection</th><th scope="col">State</th><th scope="col">Enqueued</th><th scope="col">Visible at</th><th scope="col">Receives</th><th scope="col">Acked</th><th scope="col">Nacks</th><th scope="col">Dead letter</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="9">The workspace has no consumer connections</td></tr>'}
</tbody></table></section>`;
}

function refusalsSection(recent: RecentRefusals): string {
  const rows = recent.refusals.map(
    (r) =>
      `<tr><td>${r.refused_at}</td><td>${r.mode}</td><td>${r.status}</td><td><code>${esc(r.message_id ?? '')}</code></td><td>${esc(r.message_type ?? '')}</td><td><code>${esc(r.correlation_id ?? '')}</code></td><td>${r.violations.map((v) => `<code>${esc(v.rule)}</code> ${esc(v.message)}`).join('<br>')}</td></tr>`,
  );
  const limited = recent.rate_limited;
  return `<section aria-labelledby="refusals-heading"><h2 id="refusals-heading">Recent refusals</h2>
<p>The newest refusals of this connection's publishes and validations (ids and violations only, never a body). Rate-limited: ${limited.rate_limited}, over quota: ${limited.quota_exceeded}${limited.last_refused_at ? `, latest ${limited.last_refused_at}` : ''}.</p>
<table><caption>Refusals, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Mode</th><th scope="col">Status</th><th scope="col">Message id</th><th scope="col">Message type</th><th scope="col">Correlation id</th><th scope="col">Violations</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="7">No refusals</td></tr>'}
</tbody></table><p><a href="/portal/connections/${recent.connection_id}">Refresh</a></p></section>`;
}
