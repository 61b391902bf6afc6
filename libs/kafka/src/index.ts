export { MESSAGES_TOPIC, CONTROL_TOPIC, busTopics, ensureTopics } from './topics';
export type { TopicSettings } from './topics';
export { encodeMessageHeaders, decodeMessageHeaders, stringHeaders, messageKey, HeaderDecodeError } from './headers';
export type { MessageHeaders } from './headers';
export {
  createKafka,
  createProducer,
  createBoundedProducer,
  boundedSendSettings,
  createConsumer,
  groupMinSessionTimeoutMs,
  trackGroupMembership,
  sendAcked,
  sendAckedBatch,
  runBatches,
  runRecordBatches,
  kafkaReadiness,
} from './clients';
export type {
  KafkaOptions,
  BoundedSendSettings,
  ProducedRecord,
  BatchConsumerOptions,
  RecordHandler,
  RunBatchesOptions,
  BatchHandler,
  RunRecordBatchesOptions,
} from './clients';
export type { PartitionPosition } from './paced-commits';
export type { ConsumerRun, RestartOptions } from './restarts';
export type { Kafka, Producer, Consumer, Admin } from 'kafkajs';
