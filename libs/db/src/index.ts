export { sqlLiteral, sqlTextArray } from './sql-literals';
export { arrayParameter } from './array-parameter';
export { simpleTransaction } from './simple-transaction';
export { inOneSnapshot } from './snapshot';
export { preparedQuery, preparedSimpleQuery, positionalStatement } from './prepared-query';
export type { PositionalStatement, PreparedStep } from './prepared-query';
export type { SimpleTransaction, SimpleTransactionEnd, StatementRows } from './simple-transaction';
export { createDatabase, databaseOptionsOf, migrateLatest, migrateDownAll, pingDatabase, databaseReadiness, isUniqueViolation, rawQuery } from './database';
export type { DatabaseOptions, Knex, RawResult } from './database';
/** Postgres NOTIFY channel delivery signals on when a consumer's queue got work; the payload is the consumer connection id. */
export const DELIVERY_CHANNEL = 'bus_deliveries';
export { readSkillRegistrations, REGISTRATIONS_PER_CONSUMER_MAX, skillRegistration } from './registrations';
export type { SkillRegistration, SkillRegistrationRow } from './registrations';
export { countHeldUnderLock } from './held-rows';
export type { Holdings } from './held-rows';
export { keysetPage, pageOfRows } from './keyset-page';
export type { ListPage } from './keyset-page';
export { readConnectionWorkspaces } from './connection-workspaces';
export { readConnectionDates } from './connection-dates';
export {
  IDEMPOTENCY_WINDOW,
  QUEUE_WINDOW,
  REFUSAL_WINDOW,
  PORTAL_SIGN_IN_WINDOW,
  BATCH_STATEMENT_TIMEOUT_MS,
  sweepBatch,
  sweepStatements,
  SWEEP_LOCK,
  deliveryConsumerStoryKey,
  deliveryStoryKey,
  oldestRowAt,
} from './retention';
export type { RetentionEntry, RetentionWindow } from './retention';
export { readStory, STORY_MESSAGES_MAX } from './inspection';
export type { StoryView } from './inspection';
export { writeRefusals, readRecentRefusals, readStoryHeads, REFUSALS_KEPT, REFUSALS_PAGE_MAX } from './refusals';
export type { RefusalRecord, RateLimitCount, RecentRefusals, RefusalsPage } from './refusals';
export { openTestRun, readTestRun, stopTestRun, readRunRecords, readOpenRuns, RUN_REPORT_MESSAGES_MAX, RUN_DURATION_MAX_SECONDS } from './test-runs';
export type { RunRecords, AcceptedValidate } from './test-runs';
export { TABLE_COLUMNS, ENUM_TYPES } from './tables';
export type { TableName, Row, Written, EnumValue } from './tables';
export { consumerToolsOf, consumerToolsColumns, faultsOn, writeConsumerTools, NO_FAULTS } from './consumer-tools';
export type { ConsumerTools, ConsumerFaults, ConsumerToolsRow, JoinedConsumerToolsRow } from './consumer-tools';
export { writeActivity, readActivity, ACTIVITY_WINDOW_MINUTES } from './activity';
export type { Activity, ActivityPoint } from './activity';
