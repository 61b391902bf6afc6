import { randomInt } from 'node:crypto';
import type { Router, Request } from 'express';
import type { BrowsedMessage, DeadLetter, QueueBrowse } from '@bus/contracts';
import type { MessageTrace } from '@bus/queue';
import type { ConnectionView, ReplayView } from '../admin-store';
import type { QueueView } from '../consumer-queues';
import { SIMULATION_LIMITS, SIMULATION_SEED_RANGE, type SimulationView } from '../simulations';
import { activitySection } from './activity-charts';
import { connectionAboutSection } from './connection-pages';
import { esc, saidRegion, sendPage, timeOf } from './layout';
import { requireSession } from './sign-in';
import type { PortalRefusals, RefusalsFilter, ToolsData } from './tools-data';
import { createRouter } from '@bus/http';

const WORKSPACE_ID = /^w[a-z2-7]{12}$/;
const RULE_ID = /^[A-Za-z0-9_.-]{1,100}$/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How often the replay and simulation pages' script asks for the progress while it runs. */
const REPLAY_POLL_MS = 1000;

/**
 * The pages of a connection (a consumer's queue and replay, a producer's recent refusals), of a replay's
 * progress and of the message trace (docs/portal.md). Server-rendered from ToolsData, so a page shows
 * exactly what the portal API would answer and offers only what the server would accept.
 */
export function toolsPages(deps: { tools: ToolsData }): Router {
  const router = createRouter();

  router.get('/portal/connections/:c', async (req, res) => {
    const session = requireSession(res);
    const { connection, target } = await deps.tools.connection(session, 'connection.read', String(req.params.c));
    const heading = `<h1>Connection <code>${connection.client_id}</code> <small>(${connection.kind}, ${connection.status})</small></h1>
<p>App <code>${connection.app_id}</code> in workspace <a href="/portal/workspaces/${connection.workspace_id}"><code>${connection.workspace_id}</code></a>.</p>
${connectionAboutSection(connection, deps.tools.may(session, 'connection.describe', target))}
${activitySection({ api: `/api/portal/connections/${connection.client_id}/activity`, of: 'this connection', queue: connection.kind === 'consumer', refusals: connection.kind === 'producer' })}`;
    if (connection.kind === 'producer') {
      const mayPublish = deps.tools.may(session, 'connection.publish', target) && connection.status === 'active';
      const test = connection.status === 'active' ? testMessageSection(connection, deps.tools.publishingOff ?? { publish: mayPublish }) : '';
      const simulate = mayPublish ? simulateSection(connection, deps.tools.simulatorOff ?? (await deps.tools.publishableSystemIds(connection))) : '';
      const asked = refusalsFilterOf(req.query);
      const refusals = refusalsSection(await deps.tools.refusals(session, connection.client_id, asked.filter), asked);
      sendPage(res, `Connection ${connection.client_id}`, session, `${heading}\n${test}\n${refusals}\n${simulate}`);
      return;
    }
    const replay = deps.tools.may(session, 'connection.replay', target) && connection.status === 'active' ? replayForm(connection, deps.tools.archiveMs) : '';
    const [queue, messages, deadLetters] = await Promise.all([
      deps.tools.queue(session, connection.client_id),
      deps.tools.messages(session, connection.client_id),
      deps.tools.deadLetters(session, connection.client_id),
    ]);
    const purge = deps.tools.may(session, 'connection.purge', target) ? purgeForm(queue) : '';
    const browser = messagesSection(connection, messages, deps.tools.may(session, 'message.trace', { organisationId: target.organisationId }), purge);
    const letters = deadLetterSection(connection, deadLetters, {
      resolve: deps.tools.may(session, 'connection.dead_letters', target),
      trace: deps.tools.may(session, 'message.trace', { organisationId: target.organisationId }),
    });
    sendPage(res, `Connection ${connection.client_id}`, session, `${heading}\n${queueSection(queue)}\n${browser}\n${letters}\n${replay}`);
  });

  router.get('/portal/replays/:p', async (req, res) => {
    const session = requireSession(res);
    const replay = await deps.tools.replay(session, String(req.params.p));
    sendPage(res, `Replay ${replay.replay_id}`, session, replaySection(replay));
  });

  router.get('/portal/simulations/:s', async (req, res) => {
    const session = requireSession(res);
    const simulation = await deps.tools.simulation(session, String(req.params.s));
    sendPage(res, `Simulation ${simulation.simulation_id}`, session, simulationSection(simulation));
  });

  router.get('/portal/trace', async (req, res) => {
    const session = requireSession(res);
    const asked = traceQuery(req);
    const workspaces = await deps.tools.traceableWorkspaces(session);
    const chosen = asked.workspaceId ?? '';
    const options = workspaces.map((w) => `<option value="${w.id}"${w.id === chosen ? ' selected' : ''}>${esc(w.name)} (${w.id})</option>`).join('');
    // A message id not of its form is said beside its field (the person's words kept, focus on it).
    const problem = asked.problem ? ` aria-invalid="true" aria-describedby="trace-message-id-error" autofocus` : '';
    const form = `<h1>Message trace</h1>
<p>Where an accepted message is, for each consumer connection of its workspace. No message body is shown.</p>
<form method="get" action="/portal/trace"><label for="trace-workspace">Workspace</label><select id="trace-workspace" name="workspace">${options}</select>
<label for="trace-message-id">Message id</label><input id="trace-message-id" name="message_id" size="38" required value="${esc(asked.messageId ?? '')}"${problem}>
<button type="submit">Trace</button><span class="field-error" id="trace-message-id-error">${asked.problem ?? ''}</span></form>`;
    const result =
      asked.workspaceId && asked.messageId && !asked.problem ? traceSection(await deps.tools.trace(session, asked.workspaceId, asked.messageId)) : '';
    sendPage(res, 'Message trace', session, `${form}\n${result}`, asked.problem ? 400 : 200);
  });
  return router;
}

/** The trace page's query: nothing asked (the empty form), a workspace and message id to trace, or what is wrong with them in plain words. */
function traceQuery(req: Request): { workspaceId?: string; messageId?: string; problem?: string } {
  const { workspace, message_id: messageId } = req.query;
  if (workspace === undefined && messageId === undefined) return {};
  const typed = typeof messageId === 'string' ? messageId.trim().slice(0, 200) : '';
  if (typeof workspace !== 'string' || !WORKSPACE_ID.test(workspace)) return { messageId: typed, problem: 'Choose a workspace from the list.' };
  if (!UUID.test(typed))
    return {
      workspaceId: workspace,
      messageId: typed,
      problem: 'Enter the message id the producer published: a UUID such as 6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f.',
    };
  return { workspaceId: workspace, messageId: typed.toLowerCase() };
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

/**
 * The message browser: what the consumer's next receive would take, in order, and what it holds
 * leased, each message as a receive hands it out (a preview, in a disclosure) with a link to its trace
 * for whoever may trace.
 */
function messagesSection(connection: ConnectionView, browse: QueueBrowse, trace: boolean, controls: string): string {
  const table = (caption: string, listed: readonly BrowsedMessage[], truncated: boolean, inFlight: boolean) => {
    const rows = listed.map((m) => {
      const id = trace
        ? `<a href="/portal/trace?workspace=${connection.workspace_id}&amp;message_id=${m.message_id}"><code>${m.message_id}</code></a>`
        : `<code>${m.message_id}</code>`;
      const lease = inFlight ? `<td>${m.lease_ends_at ? timeOf(m.lease_ends_at) : ''}</td>` : '';
      return `<tr><td>${id}</td><td>${esc(m.message_type)}</td><td><code>${esc(m.correlation_id)}</code></td><td>${m.receive_count}</td><td>${timeOf(m.published_at)}</td>${lease}<td><details><summary>Message (${m.body_bytes} bytes)</summary><pre tabindex="0">${esc(m.body_preview)}</pre></details></td></tr>`;
    });
    const columns = ['Message id', 'Type', 'Correlation id', 'Receives', 'Published', ...(inFlight ? ['Lease ends'] : []), 'As received'];
    const more = truncated ? `<p>Only the first ${listed.length} are listed.</p>` : '';
    return `<div class="table-scroll"><table><caption>${caption}</caption><thead><tr>${columns.map((c) => `<th scope="col">${c}</th>`).join('')}</tr></thead><tbody>
${rows.join('\n') || `<tr><td colspan="${columns.length}">None</td></tr>`}
</tbody></table></div>${more}`;
  };
  return `<section aria-labelledby="messages-heading"><h2 id="messages-heading">Messages</h2>
<p>What ${connection.client_id}'s next receive would take, in the order it would take them (the oldest message of each correlation id, with the rest of its story behind it), and what it holds leased. Looking changes nothing: no lease, no receive count.</p>
${table('Waiting, in receive order', browse.waiting, browse.waiting_truncated, false)}
${table('In flight (leased)', browse.in_flight, browse.in_flight_truncated, true)}${controls}</section>`;
}

/**
 * Purge, for whoever may: asked first with what it removes (the queue's counts as the page shows them)
 * and what it keeps, the client id typed to confirm; the page then reloads, saying how many went.
 */
function purgeForm(queue: QueueView): string {
  const waiting = Math.max(0, queue.depth - queue.in_flight - queue.dead_letters);
  const letters = queue.dead_letters === 1 ? '1 dead letter stays' : `${queue.dead_letters} dead letters stay`;
  return `
<form data-api="/api/portal/connections/${queue.client_id}/purge" data-said-in="said-purge" data-done="Purged the queue of ${queue.client_id}: {purged} messages removed." data-confirm="Purge the queue of ${queue.client_id}? This removes ${waiting} waiting and ${queue.in_flight} in-flight messages of ${queue.client_id} (as counted when this page was shown; anything that arrived since goes too); receipt handles of removed messages no longer work. Dead letters stay (${letters}). Messages published afterwards are received as usual." data-confirm-type="${queue.client_id}"><button type="submit" class="danger">Purge queue</button></form>${saidRegion('said-purge')}`;
}

/**
 * A consumer's open dead letters, each with a link to its trace for whoever may trace, and redrive and
 * discard (each asked first) for whoever may resolve them; the portal API refuses the others anyway.
 */
function deadLetterSection(
  connection: ConnectionView,
  listed: { dead_letters: readonly DeadLetter[]; truncated: boolean },
  may: { resolve: boolean; trace: boolean },
): string {
  const api = `/api/portal/connections/${connection.client_id}/dead-letters`;
  const rows = listed.dead_letters.map((d) => {
    const message = may.trace
      ? `<a href="/portal/trace?workspace=${connection.workspace_id}&amp;message_id=${d.message_id}"><code>${d.message_id}</code></a>`
      : `<code>${d.message_id}</code>`;
    const actions = may.resolve
      ? `<form data-api="${api}/${d.id}/redrive" data-said-in="said-dead-letters" data-done="Redrove dead letter ${d.id}: it is queued again." data-confirm="Redrive dead letter ${d.id} (message ${d.message_id})? It is queued again for ${connection.client_id}, ahead of the rest of its correlation id."><button type="submit">Redrive ${d.id}</button></form>
<form data-api="${api}/${d.id}/discard" data-said-in="said-dead-letters" data-done="Discarded dead letter ${d.id}." data-confirm="Discard dead letter ${d.id} (message ${d.message_id})? ${connection.client_id} never receives it, and the rest of its correlation id flows again."><button type="submit">Discard ${d.id}</button></form>`
      : '';
    return `<tr><td><code>${d.id}</code></td><td>${message}</td><td><code>${esc(d.correlation_id)}</code></td><td>${d.receive_count}</td><td>${timeOf(d.dead_lettered_at)}</td><td>${actions}</td></tr>`;
  });
  const more = listed.truncated ? '<p>Only the oldest are listed; resolve these to see the rest.</p>' : '';
  return `<section aria-labelledby="dead-letters-heading"><h2 id="dead-letters-heading">Dead letters</h2>
<p>Messages received as many times as the connection's dead-letter threshold allows without an ack. Each holds back the rest of its correlation id until it is redriven or discarded.</p>${may.resolve ? saidRegion('said-dead-letters') : ''}
<div class="table-scroll"><table><caption>Open dead letters of ${connection.client_id}, oldest first</caption><thead><tr><th scope="col">Dead letter</th><th scope="col">Message id</th><th scope="col">Correlation id</th><th scope="col">Receives</th><th scope="col">Dead-lettered at</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="6">No dead letters</td></tr>'}
</tbody></table></div>${more}</section>`;
}

/**
 * The replay form: the time is the browser's local time, sent as an instant; the server checks it is
 * within the archive. It asks first, saying from when and about how many messages (the estimate).
 */
function replayForm(connection: ConnectionView, archiveMs: number): string {
  const days = Math.round(archiveMs / 86_400_000);
  const api = `/api/portal/connections/${connection.client_id}/replays`;
  return `<section aria-labelledby="replay-heading"><h2 id="replay-heading">Replay</h2>
<p>Delivers again every archived message of the workspace published at or after the time you choose (your time zone). The archive keeps ${days} days; a time before it or in the future is refused.</p>
<form data-api="${api}" data-next="/portal/replays/{replay_id}" data-said-in="said-replay" data-done="Replay started: this page follows it." data-estimate="${api}/estimate" data-confirm="Replay to ${connection.client_id} every archived message of workspace ${connection.workspace_id} published since {since}? About {estimate} messages would be delivered to it again (as many as the archive still keeps)."><label for="replay-since">Replay from</label><input id="replay-since" name="since" type="datetime-local" step="1" required data-expects="the date and time to replay from (your time zone)"><button type="submit">Start replay</button></form>${saidRegion('said-replay')}</section>`;
}

/**
 * A pasted message validated (a dry run) or, for whoever may publish through the connection,
 * published; the answer is shown below the form, each violation at its path (assets.ts, showResult).
 */
function testMessageSection(connection: ConnectionView, offOrMay: string | { publish: boolean }): string {
  const heading = '<h2 id="test-message-heading">Test message</h2>';
  if (typeof offOrMay === 'string') return `<section aria-labelledby="test-message-heading">${heading}<p>${esc(offOrMay)}.</p></section>`;
  const publish = offOrMay.publish
    ? '<input id="test-mode-publish" name="mode" type="radio" value="publish"><label for="test-mode-publish">Publish it through this connection</label>'
    : '';
  return `<section aria-labelledby="test-message-heading">${heading}
<p>Checks a message as this connection would send it: validate is a dry run with the workspace's rules (schema, conformance, the story's sequence, what the app may publish), nothing published or recorded${offOrMay.publish ? '; publish sends it to every consumer connection of the workspace' : ''}. The secret is used for the connection's token only.</p>
<form class="wide" data-api="/api/portal/connections/${connection.client_id}/test-messages" data-result="test-message-result" data-said-in="said-test-message">
<label for="test-message">Message (JSON)</label><textarea id="test-message" class="code" name="message" rows="10" cols="80" maxlength="240000" spellcheck="false" required data-expects="the message as JSON, as the producer would publish it"></textarea>
<fieldset><legend>What to do</legend><input id="test-mode-validate" name="mode" type="radio" value="validate" checked><label for="test-mode-validate">Validate (dry run)</label>${publish}</fieldset>
<label for="test-secret">Secret</label><input id="test-secret" name="client_secret" type="password" autocomplete="off" required data-expects="the connection's current secret (sbs_…), used for its token only">
<button type="submit">Send test message</button></form>${saidRegion('said-test-message')}
<div id="test-message-result" aria-live="polite"></div></section>`;
}

/**
 * The simulated producer's form (docs/portal.md#simulated-producer): the seed comes filled in, so a run
 * can be repeated on purpose; the secret goes to the bus's token route only. `offOrSystemIds` is why
 * this deployment has none, or the system ids the app may publish for.
 */
function simulateSection(connection: ConnectionView, offOrSystemIds: string | readonly string[]): string {
  const heading = '<h2 id="simulate-heading">Simulated producer</h2>';
  const intro = `<p>Publishes generated SOM stories through this connection, as a stand-in for the real producer, so a consumer team gets valid traffic to receive. Each message passes every check of the bus like any other, and counts against the connection's limits.</p>`;
  if (typeof offOrSystemIds === 'string') return `<section aria-labelledby="simulate-heading">${heading}${intro}<p>${esc(offOrSystemIds)}.</p></section>`;
  if (offOrSystemIds.length === 0)
    return `<section aria-labelledby="simulate-heading">${heading}${intro}<p>The app may publish for no system id yet: set what it may publish on its workspace page first.</p></section>`;
  const options = offOrSystemIds.map((id) => `<option>${esc(id)}</option>`).join('');
  const seed = randomInt(0, SIMULATION_SEED_RANGE);
  const { storiesMax, ratePerSecondMax } = SIMULATION_LIMITS;
  return `<section aria-labelledby="simulate-heading">${heading}${intro}
<form data-api="/api/portal/connections/${connection.client_id}/simulations" data-next="/portal/simulations/{simulation_id}" data-said-in="said-simulate" data-done="Simulation started: this page follows it." data-confirm="Publish generated stories into workspace ${connection.workspace_id} through ${connection.client_id}? Every consumer connection of the workspace receives them.">
<label for="simulate-stories">Stories</label><input id="simulate-stories" name="stories" type="number" min="1" max="${storiesMax}" step="1" value="5" required data-expects="a whole number of stories from 1 to ${storiesMax}">
<label for="simulate-rate">Messages a second, at most</label><input id="simulate-rate" name="rate" type="number" min="0.1" max="${ratePerSecondMax}" step="0.1" value="5" required data-expects="a pace above 0, at most ${ratePerSecondMax} a second">
<label for="simulate-seed">Seed</label><input id="simulate-seed" name="seed" type="number" min="0" max="${SIMULATION_SEED_RANGE - 1}" step="1" value="${seed}" required data-expects="a whole number from 0 to ${SIMULATION_SEED_RANGE - 1}: the same seed gives the same messages">
<label for="simulate-system-id">System id</label><select id="simulate-system-id" name="system_id">${options}</select>
<label for="simulate-secret">Secret</label><input id="simulate-secret" name="client_secret" type="password" autocomplete="off" required data-expects="the connection's current secret (sbs_…), used for its token only">
<button type="submit">Start simulation</button></form>${saidRegion('said-simulate')}</section>`;
}

function simulationSection(simulation: SimulationView): string {
  const field = (name: keyof SimulationView, value: string | number | null) => `<td data-field="${name}">${esc(String(value ?? ''))}</td>`;
  const refusal = simulation.first_refusal;
  return `<h1>Simulation <code>${simulation.simulation_id}</code></h1>
<p>Of producer <a href="/portal/connections/${simulation.client_id}"><code>${simulation.client_id}</code></a>: ${simulation.stories} stories as system id <code>${esc(simulation.system_id)}</code>, seed ${simulation.seed}, at most ${simulation.rate} messages a second, started ${timeOf(simulation.started_at)}. This page follows it while it runs; <a href="/portal/simulations/${simulation.simulation_id}">refresh</a> if it does not. Every planned message is accepted, a duplicate, refused or not sent.</p>
<table data-poll="/api/portal/simulations/${simulation.simulation_id}" data-poll-while="status=running" data-poll-ms="${REPLAY_POLL_MS}"><caption>Progress</caption><tbody>
<tr><th scope="row">State</th>${field('status', simulation.status)}</tr>
<tr><th scope="row">Messages planned</th>${field('messages', simulation.messages)}</tr>
<tr><th scope="row">Accepted</th>${field('accepted', simulation.accepted)}</tr>
<tr><th scope="row">Duplicates (the seed was published before)</th>${field('duplicates', simulation.duplicates)}</tr>
<tr><th scope="row">Refused</th>${field('refused', simulation.refused)}</tr>
<tr><th scope="row">Not sent (the rest of a refused story)</th>${field('not_sent', simulation.not_sent)}</tr>
<tr><th scope="row">Stories done</th>${field('stories_done', simulation.stories_done)}</tr>
<tr><th scope="row">First refusal</th><td data-field="first_refusal">${refusal ? esc(`${refusal.status} ${refusal.violation} (${refusal.message_type} ${refusal.message_id})`) : ''}</td></tr>
<tr><th scope="row">Finished</th>${timeField('finished_at', simulation.finished_at)}</tr>
<tr><th scope="row">Error</th>${field('error', simulation.error)}</tr>
</tbody></table>`;
}

/**
 * The scanned records neither replayed nor skipped: their delivery was still live (queued or in flight),
 * which a replay leaves alone (libs/queue replay.ts), or the consumer stopped being active meanwhile.
 * Shown so the counts add up; the page's poll works it out the same way (assets.ts).
 */
function leftAlone(replay: ReplayView): number {
  return replay.scanned - replay.replayed - replay.skipped;
}

function replaySection(replay: ReplayView): string {
  const field = (name: keyof ReplayView, value: string | number | null) => `<td data-field="${name}">${esc(String(value ?? ''))}</td>`;
  return `<h1>Replay <code>${replay.replay_id}</code></h1>
<p>Of consumer <a href="/portal/connections/${replay.client_id}"><code>${replay.client_id}</code></a>, from ${timeOf(replay.since)}. This page follows it while it runs; <a href="/portal/replays/${replay.replay_id}">refresh</a> if it does not. Every scanned message is replayed, skipped or left alone.</p>
<table data-poll="/api/portal/replays/${replay.replay_id}" data-poll-while="status=running" data-poll-ms="${REPLAY_POLL_MS}"><caption>Progress</caption><tbody>
<tr><th scope="row">State</th>${field('status', replay.status)}</tr>
<tr><th scope="row">Scanned</th>${field('scanned', replay.scanned)}</tr>
<tr><th scope="row">Replayed</th>${field('replayed', replay.replayed)}</tr>
<tr><th scope="row">Skipped (never accepted)</th>${field('skipped', replay.skipped)}</tr>
<tr><th scope="row">Left alone (still queued or in flight: never a second live copy)</th><td data-field="left_alone">${leftAlone(replay)}</td></tr>
<tr><th scope="row">Requested</th>${timeField('requested_at', replay.requested_at)}</tr>
<tr><th scope="row">Finished</th>${timeField('finished_at', replay.finished_at)}</tr>
<tr><th scope="row">Error</th>${field('error', replay.error)}</tr>
</tbody></table>`;
}

/** A progress cell holding an instant: the page's script keeps it in the person's time zone as the poll updates it. */
function timeField(name: string, at: string | null): string {
  return `<td data-field="${name}" data-time>${timeOf(at)}</td>`;
}

function traceSection(trace: MessageTrace): string {
  const rows = trace.deliveries.map(
    (d) =>
      `<tr><td><code>${d.consumer_id}</code></td><td>${d.connection_status}</td><td>${d.state}</td><td>${d.enqueued_at ?? ''}</td><td>${d.visible_at ?? ''}</td><td>${d.receive_count}</td><td>${d.acked_at ?? ''}</td><td>${d.nack_count}</td><td>${d.dead_letter ? `${d.dead_letter.dead_lettered_at} ${d.dead_letter.resolution ?? 'open'}` : ''}</td></tr>`,
  );
  return `<section aria-labelledby="trace-heading"><h2 id="trace-heading">Message <code>${trace.message_id}</code></h2>
<p>${esc(trace.message_type)}, correlation id <code>${esc(trace.correlation_id)}</code>, published by <code>${trace.producer_connection_id}</code>, accepted ${trace.accepted_at} (partition ${trace.kafka.partition}, offset ${trace.kafka.offset}).</p>
<div class="table-scroll"><table><caption>Delivery to each consumer connection</caption><thead><tr><th scope="col">Consumer</th><th scope="col">Connection</th><th scope="col">State</th><th scope="col">Enqueued</th><th scope="col">Visible at</th><th scope="col">Receives</th><th scope="col">Acked</th><th scope="col">Nacks</th><th scope="col">Dead letter</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="9">The workspace has no consumer connections</td></tr>'}
</tbody></table></div></section>`;
}

/** The refusals filter as the page reads it: a rule id of its form and a text, each dropped (and said) when it cannot be one. */
function refusalsFilterOf(query: Record<string, unknown>): { filter: RefusalsFilter; typed: { rule: string; q: string }; problem?: string } {
  const typed = {
    rule: typeof query.rule === 'string' ? query.rule.trim().slice(0, 100) : '',
    q: typeof query.q === 'string' ? query.q.trim().slice(0, 200) : '',
  };
  // Control characters go, as the audit log's search drops them: no stored id holds one.
  const text = typed.q.replace(CONTROLS, '');
  const ruleOk = typed.rule === '' || RULE_ID.test(typed.rule);
  const filter = { ...(typed.rule && ruleOk ? { rule: typed.rule } : {}), ...(text ? { text } : {}) };
  return ruleOk ? { filter, typed } : { filter, typed, problem: 'Enter a rule id such as schema.required: letters, digits, dots, dashes and underscores.' };
}

function refusalsSection(recent: PortalRefusals, asked: ReturnType<typeof refusalsFilterOf>): string {
  const story = (r: PortalRefusals['refusals'][number]) =>
    r.story_message_id
      ? ` <a href="/portal/trace?workspace=${recent.workspace_id}&amp;message_id=${encodeURIComponent(r.story_message_id)}">Trace of its story</a>`
      : '';
  const rows = recent.refusals.map(
    (r) =>
      `<tr><td>${timeOf(r.refused_at)}</td><td>${r.mode}</td><td>${r.status}</td><td><code>${esc(r.message_id ?? '')}</code></td><td>${esc(r.message_type ?? '')}</td><td><code>${esc(r.correlation_id ?? '')}</code>${story(r)}</td><td>${r.violations.map((v) => `<code>${esc(v.rule)}</code> ${esc(v.message)}`).join('<br>')}</td></tr>`,
  );
  const limited = recent.rate_limited;
  const filtered = asked.filter.rule !== undefined || asked.filter.text !== undefined;
  const invalid = asked.problem ? ' aria-invalid="true" aria-describedby="refusals-rule-error"' : '';
  const form = `<form method="get" action="/portal/connections/${recent.connection_id}#refusals-heading" role="search" aria-label="Refusals"><label for="refusals-rule">Rule</label><input id="refusals-rule" name="rule" size="28" maxlength="100" value="${esc(asked.typed.rule)}"${invalid}><span class="field-error" id="refusals-rule-error">${asked.problem ?? ''}</span>
<label for="refusals-q">Message or correlation id contains</label><input id="refusals-q" name="q" type="search" size="28" maxlength="200" value="${esc(asked.typed.q)}"><button type="submit">Filter refusals</button>${filtered ? ` <a href="/portal/connections/${recent.connection_id}#refusals-heading">Show all</a>` : ''}</form>`;
  return `<section aria-labelledby="refusals-heading"><h2 id="refusals-heading">Recent refusals</h2>
<p>The newest refusals of this connection's publishes and validations (ids and violations only, never a body). Rate-limited: ${limited.rate_limited}, over quota: ${limited.quota_exceeded}${limited.last_refused_at ? `, latest ${timeOf(limited.last_refused_at)}` : ''}.</p>
<p>A refused message was never accepted, so it has no trace of its own; where its story (its correlation id) has accepted messages, “Trace of its story” shows where the newest of them went.</p>
${form}
<div class="table-scroll"><table><caption>Refusals${filtered ? ' matching the filter' : ''}, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Mode</th><th scope="col">Status</th><th scope="col">Message id</th><th scope="col">Message type</th><th scope="col">Correlation id</th><th scope="col">Violations</th></tr></thead><tbody>
${rows.join('\n') || `<tr><td colspan="7">${filtered ? 'No refusals match the filter' : 'No refusals'}</td></tr>`}
</tbody></table></div><p><a href="/portal/connections/${recent.connection_id}">Refresh</a></p></section>`;
}
