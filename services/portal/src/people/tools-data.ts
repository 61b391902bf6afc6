import type { Request, Response } from 'express';
import { BusRefusedError, BusUnreachableError, type BusProducer, type Violation } from '@bus/client';
import type { DeadLetter, DeadLetterResolution, QueueBrowse, QueueOperations, ResolvedDeadLetter } from '@bus/contracts';
import { readRecentRefusals, readStoryHeads, type Knex, type RecentRefusals } from '@bus/db';
import type { MessageTrace } from '@bus/queue';
import { unavailableUnlessDone } from '@bus/http';
import type { ReplayBody } from '../admin-requests';
import type { AdminStore, ConnectionView, ReplayView, WorkspaceView } from '../admin-store';
import { replaySince } from '../admin-requests';
import { consumerQueue, purgeConsumerQueue, requireActiveConsumer, resolveOpenDeadLetter, startReplay, type QueueView } from '../consumer-queues';
import { AdminConflictError, AdminNotFoundError, AdminRequestInvalidError, AdminUnavailableError, PortalBusUnavailableError } from '../errors';
import type { ProducerAccess } from '../producer-access';
import type { ReplayRunner } from '../replays';
import type { SimulationRequest, SimulationRunner, SimulationView } from '../simulations';
import { messageTraceOf } from '../trace-routes';
import { PortalForbiddenError } from './errors';
import type { PortalData } from './portal-data';
import type { Session } from './people-store';
import { allows, organisationsOf, type Action, type Target } from './policy';

/** portal.json's TestMessageCreate. */
/** What the refusals list is narrowed to (portal.json's rule and q parameters). */
export interface RefusalsFilter {
  rule?: string;
  text?: string;
}

/** Refusals listed at once: the default page of the producer's own refusals route. */
const REFUSALS_SHOWN = 20;
/** Workspaces the trace page offers at most: beyond them, a trace link from a workspace's pages chooses one. */
const TRACE_WORKSPACES_LISTED = 500;

/** portal.json RecentRefusals: the bus's answer, with the workspace and each refusal's story's newest accepted message (null: none, or not the person's to trace). */
export type PortalRefusals = Omit<RecentRefusals, 'refusals'> & {
  workspace_id: string;
  refusals: Array<RecentRefusals['refusals'][number] & { story_message_id: string | null }>;
};

export interface TestMessageRequest {
  mode: 'validate' | 'publish';
  /** The message as pasted: the bus judges its bytes. */
  message: string;
  client_secret: string;
}

/** portal.json's TestMessageResult: the bus's answer to the message. */
export interface TestMessageResult {
  mode: 'validate' | 'publish';
  outcome: 'accepted' | 'duplicate' | 'refused';
  status: number;
  message_id: string | null;
  violations: Violation[];
  tolerated: Violation[];
}

async function sentAs(producer: BusProducer, body: TestMessageRequest): Promise<TestMessageResult> {
  try {
    const answer = body.mode === 'publish' ? await producer.publish(body.message) : await producer.validate(body.message);
    return {
      mode: body.mode,
      outcome: answer.duplicate ? 'duplicate' : 'accepted',
      status: answer.status,
      message_id: answer.message_id,
      violations: [],
      tolerated: answer.tolerated.slice(0, 100),
    };
  } catch (err) {
    if (err instanceof BusRefusedError)
      return { mode: body.mode, outcome: 'refused', status: err.status, message_id: null, violations: err.violations.slice(0, 100), tolerated: [] };
    if (err instanceof BusUnreachableError) throw new PortalBusUnavailableError(err);
    throw err;
  }
}

/** The message browser lists this many waiting and this many in flight at most. */
const BROWSE_MAX = 20;

/** The replay estimate counts this many messages at most (the query stops there). */
const ESTIMATE_CAP = 100_000;

/** portal.json's ReplayEstimate. */
export interface ReplayEstimate {
  client_id: string;
  since: string;
  messages: number;
  more: boolean;
}

export interface ToolsDataDeps {
  /** Its failures are the 503 admin.unavailable (service.ts wraps it). */
  store: AdminStore;
  data: PortalData;
  /** Delivery's queue stats and dead letters (wrapped like the store). */
  queues: Pick<QueueOperations, 'stats' | 'deadLetters' | 'resolveDeadLetter' | 'browse' | 'purge'>;
  replays: ReplayRunner;
  /** The environment's replay archive (KAFKA_MESSAGES_RETENTION). */
  archiveMs: number;
  /** Publishing as a producer connection from its page, or why this deployment does not (words for the 409 and the page). */
  access: ProducerAccess | string;
  /** The simulated producer, or why this deployment has none. */
  simulations: SimulationRunner | string;
  db: Knex;
  now?: () => Date;
}

/**
 * A consumer connection's queue and replays, and the testing tools (message trace, recent refusals),
 * for a signed-in person: each authorised by policy.ts, each answered by what the admin API and the
 * tester routes already use (consumer-queues.ts, trace-routes.ts, @bus/db's recent refusals). The
 * portal API (tools-routes.ts) and the pages (tools-pages.tsx) both read through here.
 */
export class ToolsData {
  private readonly now: () => Date;

  constructor(private readonly deps: ToolsDataDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  get archiveMs(): number {
    return this.deps.archiveMs;
  }

  /** The connection, once the person may do `action` to it (404 admin.not_found, 403 portal.forbidden). */
  connection(session: Session, action: Action, clientId: string): Promise<{ connection: ConnectionView; target: Target }> {
    return this.deps.data.authorisedConnection(session, action, clientId);
  }

  /** Whether the person may do `action` to the connection (for the pages' controls). */
  may(session: Session, action: Action, target: Target): boolean {
    return allows(session.grants, action, target);
  }

  async queue(session: Session, clientId: string): Promise<QueueView> {
    const { connection } = await this.connection(session, 'connection.read', clientId);
    return consumerQueue(this.deps.queues, connection, this.now());
  }

  /**
   * The message browser: what a consumer connection's receive would take next, in order, and what it
   * holds leased, each message previewed as a receive hands it out (bounded: BROWSE_MAX of each).
   */
  async messages(session: Session, clientId: string): Promise<{ client_id: string } & QueueBrowse> {
    const { connection } = await this.connection(session, 'connection.read', clientId);
    if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${clientId} is a producer; it has no queue`);
    const tools = connection.consumer_tools;
    const gate = tools ? { receiveLimit: tools.max_receives, delayMs: tools.faults.delay_ms } : undefined;
    return { client_id: clientId, ...(await this.deps.queues.browse(clientId, BROWSE_MAX, gate)) };
  }

  /** A consumer connection's open dead letters, oldest first (the list is bounded: `truncated`). */
  async deadLetters(session: Session, clientId: string): Promise<{ client_id: string; dead_letters: DeadLetter[]; truncated: boolean }> {
    const { connection } = await this.connection(session, 'connection.read', clientId);
    if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${clientId} is a producer; it has no dead letters`);
    return { client_id: clientId, ...(await this.deps.queues.deadLetters(clientId)) };
  }

  /** Redrives or discards one open dead letter of the consumer, audited with the connection's organisation. */
  async resolveDeadLetter(
    req: Request,
    res: Response,
    session: Session,
    clientId: string,
    deadLetterId: string,
    resolution: DeadLetterResolution,
  ): Promise<ResolvedDeadLetter> {
    const { connection, target } = await this.connection(session, 'connection.dead_letters', clientId);
    if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${clientId} is a producer; it has no dead letters`);
    const resolved = await resolveOpenDeadLetter(this.deps.queues, connection, deadLetterId, resolution);
    const verb = resolution === 'redriven' ? 'redrive' : 'discard';
    await this.deps.data.audit(req, res, session, {
      action: `dead_letter.${verb} ${resolved.id} (message ${resolved.message_id})`,
      target: clientId,
      organisationId: target.organisationId,
      status: 200,
    });
    return resolved;
  }

  /** Purges the consumer's queue (its dead letters stay), audited as connection.purge with the connection's organisation. */
  async purge(req: Request, res: Response, session: Session, clientId: string): Promise<{ purged: number }> {
    const { connection, target } = await this.connection(session, 'connection.purge', clientId);
    const purged = await purgeConsumerQueue(this.deps.queues, connection);
    await this.deps.data.audit(req, res, session, {
      action: `connection.purge (${purged.purged} removed)`,
      target: clientId,
      organisationId: target.organisationId,
      status: 200,
    });
    return purged;
  }

  /**
   * Starts a replay of the consumer and writes it to the audit log with the connection's organisation.
   * The body is read once the person is authorised: one who may not replay learns nothing from its checks.
   */
  async startReplay(req: Request, res: Response, session: Session, clientId: string, readBody: () => Promise<ReplayBody>): Promise<ReplayView> {
    const { connection, target } = await this.connection(session, 'connection.replay', clientId);
    const replay = await startReplay(this.deps, connection, await readBody(), this.now());
    await this.deps.data.audit(req, res, session, {
      action: `connection.replay ${replay.replay_id} since ${replay.since}`,
      target: clientId,
      organisationId: target.organisationId,
      status: 202,
    });
    return replay;
  }

  /**
   * About how many messages a replay from `since` would deliver again: the workspace's messages accepted
   * since then, counted up to a cap (what the replay's confirmation says; the archive may keep fewer).
   */
  async replayEstimate(session: Session, clientId: string, since: string): Promise<ReplayEstimate> {
    const { connection } = await this.connection(session, 'connection.replay', clientId);
    const consumer = requireActiveConsumer(connection);
    const from = replaySince({ since }, this.now(), this.deps.archiveMs);
    const counted = await this.deps.data.acceptedSince(consumer.workspace_id, from, ESTIMATE_CAP + 1);
    return { client_id: clientId, since: from.toISOString(), messages: Math.min(counted, ESTIMATE_CAP), more: counted > ESTIMATE_CAP };
  }

  /** Why this deployment offers no simulated producer; undefined when it does. */
  get simulatorOff(): string | undefined {
    return typeof this.deps.simulations === 'string' ? this.deps.simulations : undefined;
  }

  /** The system ids a producer connection's app may publish for (the simulation form's choice). */
  async publishableSystemIds(connection: ConnectionView): Promise<string[]> {
    return (await this.deps.store.app(connection.app_id))?.permissions.system_ids ?? [];
  }

  /**
   * Starts a simulated producer on an active producer connection of a Sandbox, audited with the
   * connection's organisation (never the secret). The body is read once the person is authorised.
   */
  async startSimulation(req: Request, res: Response, session: Session, clientId: string, readBody: () => Promise<SimulationRequest>): Promise<SimulationView> {
    const { connection, target } = await this.connection(session, 'connection.publish', clientId);
    const runner = this.deps.simulations;
    if (typeof runner === 'string') throw new AdminConflictError(runner);
    if (connection.kind !== 'producer')
      throw new AdminConflictError(`Connection ${clientId} is a consumer; a simulated producer publishes through a producer connection`);
    if (connection.status !== 'active') throw new AdminConflictError(`Connection ${clientId} is ${connection.status}; only an active connection can publish`);
    const body = await readBody();
    const app = await this.deps.store.app(connection.app_id);
    const systemIds = app?.permissions.system_ids ?? [];
    if (!systemIds.includes(body.system_id))
      throw new AdminRequestInvalidError(
        `body "system_id" is not one the app may publish for (${systemIds.join(', ') || 'none yet: set its permissions first'})`,
      );
    const started = await runner.start({ clientId, messageTypes: app?.permissions.message_types ?? [] }, body);
    await this.deps.data.audit(req, res, session, {
      action: `connection.simulate ${started.simulation_id}: ${started.stories} stories, ${started.messages} messages at ${started.rate}/s, seed ${started.seed}`,
      target: clientId,
      organisationId: target.organisationId,
      status: 202,
    });
    return started;
  }

  /** Why this deployment cannot publish from a producer's page; undefined when it can. */
  get publishingOff(): string | undefined {
    return typeof this.deps.access === 'string' ? this.deps.access : undefined;
  }

  /**
   * A pasted message sent as the producer connection, with the secret the person typed: validated (a
   * dry run with the workspace's rules; whoever reads the connection) or published (whoever may
   * publish through it; audited). The bus's refusal is the result, its violations at their paths.
   */
  async testMessage(req: Request, res: Response, session: Session, clientId: string, readBody: () => Promise<TestMessageRequest>): Promise<TestMessageResult> {
    const { connection, target } = await this.connection(session, 'connection.read', clientId);
    const access = this.deps.access;
    if (typeof access === 'string') throw new AdminConflictError(access);
    if (connection.kind !== 'producer')
      throw new AdminConflictError(`Connection ${clientId} is a consumer; test messages are sent through a producer connection`);
    const body = await readBody();
    if (body.mode === 'publish' && !this.may(session, 'connection.publish', target)) throw new PortalForbiddenError('connection.publish');
    if (connection.status !== 'active')
      throw new AdminConflictError(`Connection ${clientId} is ${connection.status}; only an active connection can publish or validate`);
    // One attempt: a 429 is the answer to show, not one to wait out behind a person's click.
    const producer = await access.producer(clientId, body.client_secret, { maxAttempts: 1 });
    const result = await sentAs(producer, body);
    if (body.mode === 'publish')
      await this.deps.data.audit(req, res, session, {
        action: `connection.test_message ${result.outcome}${result.message_id === null ? '' : ` ${result.message_id}`} (${result.status})`,
        target: clientId,
        organisationId: target.organisationId,
        status: 200,
      });
    return result;
  }

  /** A simulated producer's progress, for whoever may read its connection. */
  async simulation(session: Session, simulationId: string): Promise<SimulationView> {
    const runner = this.deps.simulations;
    const view = typeof runner === 'string' ? undefined : await runner.view(simulationId);
    if (!view) throw new AdminNotFoundError('simulation', simulationId);
    await this.connection(session, 'connection.read', view.client_id);
    return view;
  }

  /** A replay of a consumer connection the person may read. */
  async replay(session: Session, replayId: string): Promise<ReplayView> {
    const replay = await this.deps.store.replay(replayId);
    if (!replay) throw new AdminNotFoundError('replay', replayId);
    await this.connection(session, 'connection.read', replay.client_id);
    return replay;
  }

  /** A message's trace in a workspace the person may trace in. */
  async trace(session: Session, workspaceId: string, messageId: string): Promise<MessageTrace> {
    const workspace = await this.deps.store.workspace(workspaceId);
    if (!workspace) throw new AdminNotFoundError('workspace', workspaceId);
    if (!allows(session.grants, 'message.trace', { organisationId: workspace.organisation_id })) throw new PortalForbiddenError('message.trace');
    return messageTraceOf(this.deps.db, workspaceId, messageId);
  }

  /**
   * The workspaces the person may trace messages in (the trace page's choice): the first
   * TRACE_WORKSPACES_LISTED of them, oldest first, and the `chosen` one (a trace link's) wherever it is.
   */
  async traceableWorkspaces(session: Session, chosen?: string): Promise<WorkspaceView[]> {
    const scope = organisationsOf(session.grants);
    const page = { limit: TRACE_WORKSPACES_LISTED };
    const listed = scope.all
      ? await this.deps.store.workspaces({}, page)
      : await this.deps.store.workspaces({ organisationIds: scope.ids.filter((id) => allows(session.grants, 'message.trace', { organisationId: id })) }, page);
    if (chosen === undefined || listed.some((w) => w.id === chosen)) return listed;
    const workspace = await this.deps.store.workspace(chosen);
    return workspace && allows(session.grants, 'message.trace', { organisationId: workspace.organisation_id }) ? [...listed, workspace] : listed;
  }

  /**
   * The recent refusals of a producer connection the person may read (ids, types and violations, never
   * a body), those of a rule or whose ids contain a text when asked. Each names its story's newest
   * accepted message, whose trace shows where the story's messages went, for whoever may trace them
   * (a refused message was never accepted: it has no trace of its own).
   */
  async refusals(session: Session, clientId: string, filter: RefusalsFilter = {}): Promise<PortalRefusals> {
    const { connection, target } = await this.connection(session, 'connection.read', clientId);
    if (connection.kind !== 'producer') throw new AdminConflictError(`Connection ${clientId} is a consumer; refusals are recorded for producer connections`);
    const trace = this.may(session, 'message.trace', { organisationId: target.organisationId });
    return unavailableUnlessDone(
      async () => {
        const recent = await readRecentRefusals(this.deps.db, clientId, { limit: REFUSALS_SHOWN, ...filter });
        const correlationIds = recent.refusals.flatMap((r) => (r.correlation_id === null ? [] : [r.correlation_id]));
        const heads = trace ? await readStoryHeads(this.deps.db, connection.workspace_id, correlationIds) : new Map<string, string>();
        return {
          ...recent,
          workspace_id: connection.workspace_id,
          refusals: recent.refusals.map((r) => ({ ...r, story_message_id: (r.correlation_id !== null && heads.get(r.correlation_id)) || null })),
        };
      },
      (cause) => new AdminUnavailableError(cause),
    );
  }
}
