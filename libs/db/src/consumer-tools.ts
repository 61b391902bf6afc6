import type { Knex } from 'knex';
import type { Row } from './tables';

/**
 * The operator's per-consumer-connection testing settings (docs/testing-tools.md; table
 * consumer_tools). Fault injection is for a Sandbox only (the admin API refuses it elsewhere);
 * `maxReceives` is the dead-letter threshold. A connection without a row has none of them, and the
 * pull API runs its plain receive and ack for it.
 */
export interface ConsumerFaults {
  /** Share of acks (0–1) answered done but lost: the message comes back once as a duplicate delivery. */
  duplicateRate: number;
  /** Added delivery delay: a message becomes receivable this long after it was enqueued. */
  delayMs: number;
  /** Share of leases (0–1) that end at half their visibility timeout. */
  earlyExpiryRate: number;
}

export interface ConsumerTools {
  faults: ConsumerFaults;
  /** Receives after which a message is dead-lettered instead of handed out again; null: never. */
  maxReceives: number | null;
}

/** The settings' columns of a consumer_tools row. */
export type ConsumerToolsRow = Pick<Row<'consumer_tools'>, 'duplicate_rate' | 'delay_ms' | 'early_expiry_rate' | 'max_receives'>;

/** The same columns through a LEFT JOIN (consumerToolsColumns): all null when the connection has no row. */
export type JoinedConsumerToolsRow = { [C in keyof ConsumerToolsRow]: ConsumerToolsRow[C] | null };

export const NO_FAULTS: ConsumerFaults = { duplicateRate: 0, delayMs: 0, earlyExpiryRate: 0 };

export function faultsOn(faults: ConsumerFaults): boolean {
  return faults.duplicateRate > 0 || faults.delayMs > 0 || faults.earlyExpiryRate > 0;
}

/** The settings of a consumer_tools row; null when nothing is on (so callers take the plain path). */
export function consumerToolsOf(row: JoinedConsumerToolsRow | undefined): ConsumerTools | null {
  if (!row || row.duplicate_rate === null) return null;
  const tools: ConsumerTools = {
    faults: { duplicateRate: row.duplicate_rate, delayMs: row.delay_ms ?? 0, earlyExpiryRate: row.early_expiry_rate ?? 0 },
    maxReceives: row.max_receives ?? null,
  };
  return faultsOn(tools.faults) || tools.maxReceives !== null ? tools : null;
}

/** The consumer_tools columns under `alias`, as consumerToolsOf reads them (for a LEFT JOIN). */
export function consumerToolsColumns(alias: string): string[] {
  return ['duplicate_rate', 'delay_ms', 'early_expiry_rate', 'max_receives'].map((c) => `${alias}.${c}`);
}

/** Stores a connection's settings (a change of one part keeps the other); removes the row when nothing is on. */
export async function writeConsumerTools(db: Knex, consumerId: string, change: Partial<ConsumerTools>): Promise<ConsumerTools | null> {
  return db.transaction(async (trx) => {
    const current = await trx('consumer_tools').where({ consumer_id: consumerId }).forUpdate().first();
    const before = consumerToolsOf(current) ?? { faults: NO_FAULTS, maxReceives: null };
    const next: ConsumerTools = {
      faults: change.faults ?? before.faults,
      maxReceives: change.maxReceives === undefined ? before.maxReceives : change.maxReceives,
    };
    if (!faultsOn(next.faults) && next.maxReceives === null) {
      await trx('consumer_tools').where({ consumer_id: consumerId }).delete();
      return null;
    }
    const row = {
      consumer_id: consumerId,
      duplicate_rate: next.faults.duplicateRate,
      delay_ms: next.faults.delayMs,
      early_expiry_rate: next.faults.earlyExpiryRate,
      max_receives: next.maxReceives,
      updated_at: new Date(),
    };
    await trx('consumer_tools').insert(row).onConflict('consumer_id').merge();
    return next;
  });
}
