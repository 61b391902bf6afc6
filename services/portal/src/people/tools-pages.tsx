import { randomInt } from 'node:crypto';
import type { Router, Request } from 'express';
import type { ComponentChildren } from 'preact';
import type { BrowsedMessage, DeadLetter, QueueBrowse } from '@bus/contracts';
import type { MessageTrace } from '@bus/queue';
import type { ConnectionView, ReplayView } from '../admin-store';
import type { QueueView } from '../consumer-queues';
import { SIMULATION_LIMITS, SIMULATION_SEED_RANGE, type SimulationView } from '../simulations';
import { ActivitySection } from './activity-charts';
import { ConnectionAboutSection } from './connection-pages';
import { Fact, SaidRegion, Table, Time } from './components';
import { sendPage } from './layout';
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
    const title = `Connection ${connection.client_id}`;
    const heading = <ConnectionHeading connection={connection} mayDescribe={deps.tools.may(session, 'connection.describe', target)} />;
    if (connection.kind === 'producer') {
      const mayPublish = deps.tools.may(session, 'connection.publish', target) && connection.status === 'active';
      const simulate = mayPublish ? (deps.tools.simulatorOff ?? (await deps.tools.publishableSystemIds(connection))) : undefined;
      const asked = refusalsFilterOf(req.query);
      const refusals = await deps.tools.refusals(session, connection.client_id, asked.filter);
      sendPage(
        res,
        title,
        session,
        <>
          {heading}
          {connection.status === 'active' && <TestMessageSection connection={connection} offOrMay={deps.tools.publishingOff ?? { publish: mayPublish }} />}
          <RefusalsSection recent={refusals} asked={asked} />
          {simulate !== undefined && <SimulateSection connection={connection} offOrSystemIds={simulate} />}
        </>,
      );
      return;
    }
    const [queue, messages, deadLetters] = await Promise.all([
      deps.tools.queue(session, connection.client_id),
      deps.tools.messages(session, connection.client_id),
      deps.tools.deadLetters(session, connection.client_id),
    ]);
    const trace = deps.tools.may(session, 'message.trace', { organisationId: target.organisationId });
    const replay = deps.tools.may(session, 'connection.replay', target) && connection.status === 'active';
    sendPage(
      res,
      title,
      session,
      <>
        {heading}
        <QueueSection queue={queue} />
        <MessagesSection connection={connection} browse={messages} trace={trace}>
          {deps.tools.may(session, 'connection.purge', target) && <PurgeForm queue={queue} />}
        </MessagesSection>
        <DeadLetterSection connection={connection} listed={deadLetters} may={{ resolve: deps.tools.may(session, 'connection.dead_letters', target), trace }} />
        {replay && <ReplayForm connection={connection} archiveMs={deps.tools.archiveMs} />}
      </>,
    );
  });

  router.get('/portal/replays/:p', async (req, res) => {
    const session = requireSession(res);
    const replay = await deps.tools.replay(session, String(req.params.p));
    sendPage(res, `Replay ${replay.replay_id}`, session, <ReplayProgress replay={replay} />);
  });

  router.get('/portal/simulations/:s', async (req, res) => {
    const session = requireSession(res);
    const simulation = await deps.tools.simulation(session, String(req.params.s));
    sendPage(res, `Simulation ${simulation.simulation_id}`, session, <SimulationProgress simulation={simulation} />);
  });

  router.get('/portal/trace', async (req, res) => {
    const session = requireSession(res);
    const asked = traceQuery(req);
    const workspaces = await deps.tools.traceableWorkspaces(session, asked.workspaceId);
    const trace = asked.workspaceId && asked.messageId && !asked.problem ? await deps.tools.trace(session, asked.workspaceId, asked.messageId) : undefined;
    sendPage(
      res,
      'Message trace',
      session,
      <>
        <TraceForm workspaces={workspaces} asked={asked} />
        {trace && <TraceSection trace={trace} />}
      </>,
      asked.problem ? 400 : 200,
    );
  });
  return router;
}

/** What the trace page was asked: nothing (the empty form), a workspace and message id to trace, or what is wrong with them in plain words. */
interface TraceQuery {
  workspaceId?: string;
  messageId?: string;
  problem?: string;
}

function traceQuery(req: Request): TraceQuery {
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

/** The trace form; a message id not of its form is said beside its field (the person's words kept, focus on it). */
export function TraceForm({ workspaces, asked }: { workspaces: readonly { id: string; name: string }[]; asked: TraceQuery }) {
  const chosen = asked.workspaceId ?? '';
  const problem = asked.problem !== undefined;
  return (
    <>
      <h1>Message trace</h1>
      <p>Where an accepted message is, for each consumer connection of its workspace. No message body is shown.</p>
      <form method="get" action="/portal/trace">
        <label for="trace-workspace">Workspace</label>
        <select id="trace-workspace" name="workspace">
          {workspaces.map((w) => (
            <option value={w.id} selected={w.id === chosen}>
              {w.name} ({w.id})
            </option>
          ))}
        </select>
        <label for="trace-message-id">Message id</label>
        <input
          id="trace-message-id"
          name="message_id"
          size={38}
          required
          value={asked.messageId ?? ''}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? 'trace-message-id-error' : undefined}
          autofocus={problem}
        />
        <button type="submit">Trace</button>
        <span class="field-error" id="trace-message-id-error">
          {asked.problem}
        </span>
      </form>
    </>
  );
}

/** The connection's heading, where it belongs, what it is (name, description, use) and its activity charts. */
function ConnectionHeading({ connection, mayDescribe }: { connection: ConnectionView; mayDescribe: boolean }) {
  return (
    <>
      <h1>
        Connection <code>{connection.client_id}</code>{' '}
        <small>
          ({connection.kind}, {connection.status})
        </small>
      </h1>
      <p>
        App <code>{connection.app_id}</code> in workspace{' '}
        <a href={`/portal/workspaces/${connection.workspace_id}`}>
          <code>{connection.workspace_id}</code>
        </a>
        .
      </p>
      <ConnectionAboutSection connection={connection} mayDescribe={mayDescribe} />
      <ActivitySection
        charts={{
          api: `/api/portal/connections/${connection.client_id}/activity`,
          of: 'this connection',
          queue: connection.kind === 'consumer',
          refusals: connection.kind === 'producer',
        }}
      />
    </>
  );
}

function QueueSection({ queue }: { queue: QueueView }) {
  return (
    <section aria-labelledby="queue-heading">
      <h2 id="queue-heading">Queue</h2>
      <table>
        <caption>Queue of {queue.client_id}</caption>
        <tbody>
          <Fact name="Depth (not yet acked)">
            <td>{queue.depth}</td>
          </Fact>
          <Fact name="In flight (leased)">
            <td>{queue.in_flight}</td>
          </Fact>
          <Fact name="Dead letters">
            <td>{queue.dead_letters}</td>
          </Fact>
          <Fact name="Oldest age">
            <td>{queue.oldest_age_seconds === null ? 'nothing waiting' : `${Math.round(queue.oldest_age_seconds)} s`}</td>
          </Fact>
        </tbody>
      </table>
      <p>
        <a href={`/portal/connections/${queue.client_id}`}>Refresh</a>
      </p>
    </section>
  );
}

/** A message's id, linked to its trace for whoever may trace. */
function MessageId({ connection, messageId, trace }: { connection: ConnectionView; messageId: string; trace: boolean }) {
  const id = <code>{messageId}</code>;
  return trace ? <a href={`/portal/trace?workspace=${connection.workspace_id}&message_id=${messageId}`}>{id}</a> : id;
}

/**
 * The message browser: what the consumer's next receive would take, in order, and what it holds
 * leased, each message as a receive hands it out (a preview, in a disclosure) with a link to its trace
 * for whoever may trace.
 */
function MessagesSection({
  connection,
  browse,
  trace,
  children,
}: {
  connection: ConnectionView;
  browse: QueueBrowse;
  trace: boolean;
  /** The controls over the whole queue, below the tables (the purge, for whoever may). */
  children?: ComponentChildren;
}) {
  return (
    <section aria-labelledby="messages-heading">
      <h2 id="messages-heading">Messages</h2>
      <p>
        What {connection.client_id}'s next receive would take, in the order it would take them (the oldest message of each correlation id, with the rest of its
        story behind it), and what it holds leased. Looking changes nothing: no lease, no receive count.
      </p>
      <MessageTable
        connection={connection}
        trace={trace}
        caption="Waiting, in receive order"
        listed={browse.waiting}
        truncated={browse.waiting_truncated}
        inFlight={false}
      />
      <MessageTable
        connection={connection}
        trace={trace}
        caption="In flight (leased)"
        listed={browse.in_flight}
        truncated={browse.in_flight_truncated}
        inFlight
      />
      {children}
    </section>
  );
}

/**
 * Purge, for whoever may: asked first with what it removes (the queue's counts as the page shows them)
 * and what it keeps, the client id typed to confirm; the page then reloads, saying how many went.
 */
function PurgeForm({ queue }: { queue: QueueView }) {
  const waiting = Math.max(0, queue.depth - queue.in_flight - queue.dead_letters);
  const letters = queue.dead_letters === 1 ? '1 dead letter stays' : `${queue.dead_letters} dead letters stay`;
  return (
    <>
      <form
        data-api={`/api/portal/connections/${queue.client_id}/purge`}
        data-said-in="said-purge"
        data-done={`Purged the queue of ${queue.client_id}: {purged} messages removed.`}
        data-confirm={`Purge the queue of ${queue.client_id}? This removes ${waiting} waiting and ${queue.in_flight} in-flight messages of ${queue.client_id} (as counted when this page was shown; anything that arrived since goes too); receipt handles of removed messages no longer work. Dead letters stay (${letters}). Messages published afterwards are received as usual.`}
        data-confirm-type={queue.client_id}
      >
        <button type="submit" class="danger">
          Purge queue
        </button>
      </form>
      <SaidRegion id="said-purge" />
    </>
  );
}

interface MessageTableProps {
  connection: ConnectionView;
  trace: boolean;
  caption: string;
  listed: readonly BrowsedMessage[];
  truncated: boolean;
  /** Leased messages: a column says when each lease ends. */
  inFlight: boolean;
}

function MessageTable({ connection, trace, caption, listed, truncated, inFlight }: MessageTableProps) {
  const rows = listed.map((m) => (
    <tr>
      <td>
        <MessageId connection={connection} messageId={m.message_id} trace={trace} />
      </td>
      <td>{m.message_type}</td>
      <td>
        <code>{m.correlation_id}</code>
      </td>
      <td>{m.receive_count}</td>
      <td>
        <Time at={m.published_at} />
      </td>
      {inFlight && (
        <td>
          <Time at={m.lease_ends_at} />
        </td>
      )}
      <td>
        <details>
          <summary>Message ({m.body_bytes} bytes)</summary>
          <pre tabindex={0}>{m.body_preview}</pre>
        </details>
      </td>
    </tr>
  ));
  const columns = ['Message id', 'Type', 'Correlation id', 'Receives', 'Published', ...(inFlight ? ['Lease ends'] : []), 'As received'];
  return (
    <>
      <Table scrolls caption={caption} columns={columns} rows={rows} empty="None" />
      {truncated && <p>Only the first {listed.length} are listed.</p>}
    </>
  );
}

interface DeadLetterSectionProps {
  connection: ConnectionView;
  listed: { dead_letters: readonly DeadLetter[]; truncated: boolean };
  may: { resolve: boolean; trace: boolean };
}

/**
 * A consumer's open dead letters, each with a link to its trace for whoever may trace, and redrive and
 * discard (each asked first) for whoever may resolve them; the portal API refuses the others anyway.
 */
function DeadLetterSection({ connection, listed, may }: DeadLetterSectionProps) {
  const rows = listed.dead_letters.map((d) => (
    <tr>
      <td>
        <code>{d.id}</code>
      </td>
      <td>
        <MessageId connection={connection} messageId={d.message_id} trace={may.trace} />
      </td>
      <td>
        <code>{d.correlation_id}</code>
      </td>
      <td>{d.receive_count}</td>
      <td>
        <Time at={d.dead_lettered_at} />
      </td>
      <td>{may.resolve && <DeadLetterActions connection={connection} deadLetter={d} />}</td>
    </tr>
  ));
  return (
    <section aria-labelledby="dead-letters-heading">
      <h2 id="dead-letters-heading">Dead letters</h2>
      <p>
        Messages received as many times as the connection's dead-letter threshold allows without an ack. Each holds back the rest of its correlation id until it
        is redriven or discarded.
      </p>
      {may.resolve && <SaidRegion id="said-dead-letters" />}
      <Table
        scrolls
        caption={`Open dead letters of ${connection.client_id}, oldest first`}
        columns={['Dead letter', 'Message id', 'Correlation id', 'Receives', 'Dead-lettered at', 'Actions']}
        rows={rows}
        empty="No dead letters"
      />
      {listed.truncated && <p>Only the oldest are listed; resolve these to see the rest.</p>}
    </section>
  );
}

function DeadLetterActions({ connection, deadLetter: d }: { connection: ConnectionView; deadLetter: DeadLetter }) {
  const api = `/api/portal/connections/${connection.client_id}/dead-letters/${d.id}`;
  return (
    <>
      <form
        data-api={`${api}/redrive`}
        data-said-in="said-dead-letters"
        data-done={`Redrove dead letter ${d.id}: it is queued again.`}
        data-confirm={`Redrive dead letter ${d.id} (message ${d.message_id})? It is queued again for ${connection.client_id}, ahead of the rest of its correlation id.`}
      >
        <button type="submit">Redrive {d.id}</button>
      </form>
      <form
        data-api={`${api}/discard`}
        data-said-in="said-dead-letters"
        data-done={`Discarded dead letter ${d.id}.`}
        data-confirm={`Discard dead letter ${d.id} (message ${d.message_id})? ${connection.client_id} never receives it, and the rest of its correlation id flows again.`}
      >
        <button type="submit">Discard {d.id}</button>
      </form>
    </>
  );
}

/**
 * The replay form: the time is the browser's local time, sent as an instant; the server checks it is
 * within the archive. It asks first, saying from when and about how many messages (the estimate).
 */
function ReplayForm({ connection, archiveMs }: { connection: ConnectionView; archiveMs: number }) {
  const days = Math.round(archiveMs / 86_400_000);
  const api = `/api/portal/connections/${connection.client_id}/replays`;
  return (
    <section aria-labelledby="replay-heading">
      <h2 id="replay-heading">Replay</h2>
      <p>
        Delivers again every archived message of the workspace published at or after the time you choose (your time zone). The archive keeps {days} days; a time
        before it or in the future is refused.
      </p>
      <form
        data-api={api}
        data-next="/portal/replays/{replay_id}"
        data-said-in="said-replay"
        data-done="Replay started: this page follows it."
        data-estimate={`${api}/estimate`}
        data-confirm={`Replay to ${connection.client_id} every archived message of workspace ${connection.workspace_id} published since {since}? About {estimate} messages would be delivered to it again (as many as the archive still keeps).`}
      >
        <label for="replay-since">Replay from</label>
        <input id="replay-since" name="since" type="datetime-local" step="1" required data-expects="the date and time to replay from (your time zone)" />
        <button type="submit">Start replay</button>
      </form>
      <SaidRegion id="said-replay" />
    </section>
  );
}

/**
 * A pasted message validated (a dry run) or, for whoever may publish through the connection,
 * published; the answer is shown below the form, each violation at its path (assets.ts, showResult).
 * `offOrMay` is why this deployment has no test messages, or whether the person may publish.
 */
function TestMessageSection({ connection, offOrMay }: { connection: ConnectionView; offOrMay: string | { publish: boolean } }) {
  const heading = <h2 id="test-message-heading">Test message</h2>;
  if (typeof offOrMay === 'string')
    return (
      <section aria-labelledby="test-message-heading">
        {heading}
        <p>{offOrMay}.</p>
      </section>
    );
  return (
    <section aria-labelledby="test-message-heading">
      {heading}
      <p>
        Checks a message as this connection would send it: validate is a dry run with the workspace's rules (schema, conformance, the story's sequence, what the
        app may publish), nothing published or recorded{offOrMay.publish && '; publish sends it to every consumer connection of the workspace'}. The secret is
        used for the connection's token only.
      </p>
      <form
        class="wide"
        data-api={`/api/portal/connections/${connection.client_id}/test-messages`}
        data-result="test-message-result"
        data-said-in="said-test-message"
      >
        <label for="test-message">Message (JSON)</label>
        <textarea
          id="test-message"
          class="code"
          name="message"
          rows={10}
          cols={80}
          maxlength={240000}
          spellcheck={false}
          required
          data-expects="the message as JSON, as the producer would publish it"
        />
        <fieldset>
          <legend>What to do</legend>
          <input id="test-mode-validate" name="mode" type="radio" value="validate" checked />
          <label for="test-mode-validate">Validate (dry run)</label>
          {offOrMay.publish && (
            <>
              <input id="test-mode-publish" name="mode" type="radio" value="publish" />
              <label for="test-mode-publish">Publish it through this connection</label>
            </>
          )}
        </fieldset>
        <SecretField id="test-secret" />
        <button type="submit">Send test message</button>
      </form>
      <SaidRegion id="said-test-message" />
      <div id="test-message-result" aria-live="polite" />
    </section>
  );
}

/** The connection's current secret, asked for a token only (the test message's and the simulation's). */
function SecretField({ id }: { id: string }) {
  return (
    <>
      <label for={id}>Secret</label>
      <input
        id={id}
        name="client_secret"
        type="password"
        autocomplete="off"
        required
        data-expects="the connection's current secret (sbs_…), used for its token only"
      />
    </>
  );
}

/**
 * The simulated producer's form (docs/portal.md#simulated-producer): the seed comes filled in, so a run
 * can be repeated on purpose; the secret goes to the bus's token route only. `offOrSystemIds` is why
 * this deployment has none, or the system ids the app may publish for.
 */
function SimulateSection({ connection, offOrSystemIds }: { connection: ConnectionView; offOrSystemIds: string | readonly string[] }) {
  return (
    <section aria-labelledby="simulate-heading">
      <h2 id="simulate-heading">Simulated producer</h2>
      <p>
        Publishes generated SOM stories through this connection, as a stand-in for the real producer, so a consumer team gets valid traffic to receive. Each
        message passes every check of the bus like any other, and counts against the connection's limits.
      </p>
      {typeof offOrSystemIds === 'string' ? (
        <p>{offOrSystemIds}.</p>
      ) : offOrSystemIds.length === 0 ? (
        <p>The app may publish for no system id yet: set what it may publish on its workspace page first.</p>
      ) : (
        <SimulateForm connection={connection} systemIds={offOrSystemIds} />
      )}
    </section>
  );
}

function SimulateForm({ connection, systemIds }: { connection: ConnectionView; systemIds: readonly string[] }) {
  const seed = randomInt(0, SIMULATION_SEED_RANGE);
  const { storiesMax, ratePerSecondMax } = SIMULATION_LIMITS;
  return (
    <>
      <form
        data-api={`/api/portal/connections/${connection.client_id}/simulations`}
        data-next="/portal/simulations/{simulation_id}"
        data-said-in="said-simulate"
        data-done="Simulation started: this page follows it."
        data-confirm={`Publish generated stories into workspace ${connection.workspace_id} through ${connection.client_id}? Every consumer connection of the workspace receives them.`}
      >
        <label for="simulate-stories">Stories</label>
        <input
          id="simulate-stories"
          name="stories"
          type="number"
          min="1"
          max={storiesMax}
          step="1"
          value="5"
          required
          data-expects={`a whole number of stories from 1 to ${storiesMax}`}
        />
        <label for="simulate-rate">Messages a second, at most</label>
        <input
          id="simulate-rate"
          name="rate"
          type="number"
          min="0.1"
          max={ratePerSecondMax}
          step="0.1"
          value="5"
          required
          data-expects={`a pace above 0, at most ${ratePerSecondMax} a second`}
        />
        <label for="simulate-seed">Seed</label>
        <input
          id="simulate-seed"
          name="seed"
          type="number"
          min="0"
          max={SIMULATION_SEED_RANGE - 1}
          step="1"
          value={seed}
          required
          data-expects={`a whole number from 0 to ${SIMULATION_SEED_RANGE - 1}: the same seed gives the same messages`}
        />
        <label for="simulate-system-id">System id</label>
        <select id="simulate-system-id" name="system_id">
          {systemIds.map((id) => (
            <option>{id}</option>
          ))}
        </select>
        <SecretField id="simulate-secret" />
        <button type="submit">Start simulation</button>
      </form>
      <SaidRegion id="said-simulate" />
    </>
  );
}

/** A progress row: its cell the page's poll keeps up to date from the API's answer field of the same name. */
function FieldRow({ label, name, value }: { label: string; name: string; value: string | number | null }) {
  return (
    <Fact name={label}>
      <td data-field={name}>{value ?? ''}</td>
    </Fact>
  );
}

/** A progress row holding an instant: the page's script keeps it in the person's time zone as the poll updates it. */
function TimeRow({ label, name, at }: { label: string; name: string; at: string | null }) {
  return (
    <Fact name={label}>
      <td data-field={name} data-time="">
        <Time at={at} />
      </td>
    </Fact>
  );
}

/** The table a running job's page polls (data-poll) while its status is running. */
function Progress({ poll, children }: { poll: string; children: ComponentChildren }) {
  return (
    <table data-poll={poll} data-poll-while="status=running" data-poll-ms={REPLAY_POLL_MS}>
      <caption>Progress</caption>
      <tbody>{children}</tbody>
    </table>
  );
}

function SimulationProgress({ simulation: s }: { simulation: SimulationView }) {
  const refusal = s.first_refusal;
  return (
    <>
      <h1>
        Simulation <code>{s.simulation_id}</code>
      </h1>
      <p>
        Of producer{' '}
        <a href={`/portal/connections/${s.client_id}`}>
          <code>{s.client_id}</code>
        </a>
        : {s.stories} stories as system id <code>{s.system_id}</code>, seed {s.seed}, at most {s.rate} messages a second, started <Time at={s.started_at} />.
        This page follows it while it runs; <a href={`/portal/simulations/${s.simulation_id}`}>refresh</a> if it does not. Every planned message is accepted, a
        duplicate, refused or not sent.
      </p>
      <Progress poll={`/api/portal/simulations/${s.simulation_id}`}>
        <FieldRow label="State" name="status" value={s.status} />
        <FieldRow label="Messages planned" name="messages" value={s.messages} />
        <FieldRow label="Accepted" name="accepted" value={s.accepted} />
        <FieldRow label="Duplicates (the seed was published before)" name="duplicates" value={s.duplicates} />
        <FieldRow label="Refused" name="refused" value={s.refused} />
        <FieldRow label="Not sent (the rest of a refused story)" name="not_sent" value={s.not_sent} />
        <FieldRow label="Stories done" name="stories_done" value={s.stories_done} />
        <FieldRow
          label="First refusal"
          name="first_refusal"
          value={refusal && `${refusal.status} ${refusal.violation} (${refusal.message_type} ${refusal.message_id})`}
        />
        <TimeRow label="Finished" name="finished_at" at={s.finished_at} />
        <FieldRow label="Error" name="error" value={s.error} />
      </Progress>
    </>
  );
}

/**
 * The scanned records neither replayed nor skipped: their delivery was still live (queued or in flight),
 * which a replay leaves alone (libs/queue replay.ts), or the consumer stopped being active meanwhile.
 * Shown so the counts add up; the page's poll works it out the same way (assets.ts).
 */
function leftAlone(replay: ReplayView): number {
  return replay.scanned - replay.replayed - replay.skipped;
}

function ReplayProgress({ replay: r }: { replay: ReplayView }) {
  return (
    <>
      <h1>
        Replay <code>{r.replay_id}</code>
      </h1>
      <p>
        Of consumer{' '}
        <a href={`/portal/connections/${r.client_id}`}>
          <code>{r.client_id}</code>
        </a>
        , from <Time at={r.since} />. This page follows it while it runs; <a href={`/portal/replays/${r.replay_id}`}>refresh</a> if it does not. Every scanned
        message is replayed, skipped or left alone.
      </p>
      <Progress poll={`/api/portal/replays/${r.replay_id}`}>
        <FieldRow label="State" name="status" value={r.status} />
        <FieldRow label="Scanned" name="scanned" value={r.scanned} />
        <FieldRow label="Replayed" name="replayed" value={r.replayed} />
        <FieldRow label="Skipped (never accepted)" name="skipped" value={r.skipped} />
        <FieldRow label="Left alone (still queued or in flight: never a second live copy)" name="left_alone" value={leftAlone(r)} />
        <TimeRow label="Requested" name="requested_at" at={r.requested_at} />
        <TimeRow label="Finished" name="finished_at" at={r.finished_at} />
        <FieldRow label="Error" name="error" value={r.error} />
      </Progress>
    </>
  );
}

function TraceSection({ trace }: { trace: MessageTrace }) {
  const rows = trace.deliveries.map((d) => (
    <tr>
      <td>
        <code>{d.consumer_id}</code>
      </td>
      <td>{d.connection_status}</td>
      <td>{d.state}</td>
      <td>{d.enqueued_at ?? ''}</td>
      <td>{d.visible_at ?? ''}</td>
      <td>{d.receive_count}</td>
      <td>{d.acked_at ?? ''}</td>
      <td>{d.nack_count}</td>
      <td>{d.dead_letter ? `${d.dead_letter.dead_lettered_at} ${d.dead_letter.resolution ?? 'open'}` : ''}</td>
    </tr>
  ));
  return (
    <section aria-labelledby="trace-heading">
      <h2 id="trace-heading">
        Message <code>{trace.message_id}</code>
      </h2>
      <p>
        {trace.message_type}, correlation id <code>{trace.correlation_id}</code>, published by <code>{trace.producer_connection_id}</code>, accepted{' '}
        {trace.accepted_at} (partition {trace.kafka.partition}, offset {trace.kafka.offset}).
      </p>
      <Table
        scrolls
        caption="Delivery to each consumer connection"
        columns={['Consumer', 'Connection', 'State', 'Enqueued', 'Visible at', 'Receives', 'Acked', 'Nacks', 'Dead letter']}
        rows={rows}
        empty="The workspace has no consumer connections"
      />
      {trace.deliveries_truncated && <p>More consumer connections hold or may get this message than the {trace.deliveries.length} listed.</p>}
    </section>
  );
}

/** The refusals list as the page asked for it: the filter, the fields as typed, and why a rule id was dropped. */
interface RefusalsAsked {
  filter: RefusalsFilter;
  typed: { rule: string; q: string };
  problem?: string;
}

/** The refusals filter as the page reads it: a rule id of its form and a text, each dropped (and said) when it cannot be one. */
function refusalsFilterOf(query: Record<string, unknown>): RefusalsAsked {
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

function RefusalsFilterForm({ connectionId, asked, filtered }: { connectionId: string; asked: RefusalsAsked; filtered: boolean }) {
  const problem = asked.problem !== undefined;
  const all = `/portal/connections/${connectionId}#refusals-heading`;
  return (
    <form method="get" action={all} role="search" aria-label="Refusals">
      <label for="refusals-rule">Rule</label>
      <input
        id="refusals-rule"
        name="rule"
        size={28}
        maxlength={100}
        value={asked.typed.rule}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={problem ? 'refusals-rule-error' : undefined}
      />
      <span class="field-error" id="refusals-rule-error">
        {asked.problem}
      </span>{' '}
      <label for="refusals-q">Message or correlation id contains</label>
      <input id="refusals-q" name="q" type="search" size={28} maxlength={200} value={asked.typed.q} />
      <button type="submit">Filter refusals</button>
      {filtered && (
        <>
          {' '}
          <a href={all}>Show all</a>
        </>
      )}
    </form>
  );
}

type Refusal = PortalRefusals['refusals'][number];

function RefusalRow({ refusal: r, workspaceId }: { refusal: Refusal; workspaceId: string }) {
  return (
    <tr>
      <td>
        <Time at={r.refused_at} />
      </td>
      <td>{r.mode}</td>
      <td>{r.status}</td>
      <td>
        <code>{r.message_id ?? ''}</code>
      </td>
      <td>{r.message_type ?? ''}</td>
      <td>
        <code>{r.correlation_id ?? ''}</code>
        {r.story_message_id && (
          <>
            {' '}
            <a href={`/portal/trace?workspace=${workspaceId}&message_id=${encodeURIComponent(r.story_message_id)}`}>Trace of its story</a>
          </>
        )}
      </td>
      <td>
        {r.violations.map((v, i) => (
          <>
            {i > 0 && <br />}
            <code>{v.rule}</code> {v.message}
          </>
        ))}
      </td>
    </tr>
  );
}

export function RefusalsSection({ recent, asked }: { recent: PortalRefusals; asked: RefusalsAsked }) {
  const limited = recent.rate_limited;
  const filtered = asked.filter.rule !== undefined || asked.filter.text !== undefined;
  return (
    <section aria-labelledby="refusals-heading">
      <h2 id="refusals-heading">Recent refusals</h2>
      <p>
        The newest refusals of this connection's publishes and validations (ids and violations only, never a body). Rate-limited: {limited.rate_limited}, over
        quota: {limited.quota_exceeded}
        {limited.last_refused_at && (
          <>
            , latest <Time at={limited.last_refused_at} />
          </>
        )}
        .
      </p>
      <p>
        A refused message was never accepted, so it has no trace of its own; where its story (its correlation id) has accepted messages, “Trace of its story”
        shows where the newest of them went.
      </p>
      <RefusalsFilterForm connectionId={recent.connection_id} asked={asked} filtered={filtered} />
      <Table
        scrolls
        caption={`Refusals${filtered ? ' matching the filter' : ''}, newest first`}
        columns={['When', 'Mode', 'Status', 'Message id', 'Message type', 'Correlation id', 'Violations']}
        rows={recent.refusals.map((r) => (
          <RefusalRow refusal={r} workspaceId={recent.workspace_id} />
        ))}
        empty={filtered ? 'No refusals match the filter' : 'No refusals'}
      />
      <p>
        <a href={`/portal/connections/${recent.connection_id}`}>Refresh</a>
      </p>
    </section>
  );
}
