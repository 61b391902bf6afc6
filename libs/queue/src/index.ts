export { KnexDeliveryStore, acceptanceKey } from './delivery-store';
export { messageToEnqueue } from './message-to-enqueue';
export type { DeliveryStore, Acceptance, MessageToEnqueue, QuarantinedRecord, StoredQuarantinedRecord } from './delivery-store';
export { checkAcceptance, judgeAcceptance, readMessageHeaders, readRecordContent } from './acceptance-check';
export { RecordValue } from './record-content';
export type { AcceptanceCheck, RecordToCheck } from './acceptance-check';
export { redriveQuarantined, redriveRecord, createRedriveMetrics } from './redrive';
export type { RedriveDeps, RedriveMetrics } from './redrive';
export { replayToConsumer } from './replay';
export type { ReplayDeps } from './replay';
export { queueOperations } from './operations';
export { pacedQueueCounts } from './queue-counts';
export { purgeQueue } from './purge';
export { DEAD_LETTERS_LISTED } from './dead-letters';
export { lockStories, lockStoriesOfDeliveries } from './story-lock';
export { KnexQueueStore, queueCall, SETTLE_TIMEOUT_MS, SettleTimeoutError } from './queue-store';
export type {
  QueueStore,
  ConsumerToolsStore,
  LeasedMessage,
  LeaseRef,
  SettleOutcome,
  ReceiveResult,
  ReceiveGate,
  PeekedMessage,
  InFlightMessage,
  PeekFilter,
  PeekAnswer,
  FaultKind,
} from './queue-store';
export { QueueUnavailableError } from './errors';
export { readMessageTrace } from './message-trace';
export type { MessageTrace } from '@bus/client';
export { RETENTION_TABLES, RETENTION_WINDOWS, retentionConfig, retentionSettings } from './retention';
export type { RetentionSettings, RetentionVariable } from './retention';
export { readRunDeliveries } from './run-deliveries';
export { storyExportLines, STORY_EXPORT_LIMITS } from './story-export';
export type { StoryExportLine } from './story-export';
