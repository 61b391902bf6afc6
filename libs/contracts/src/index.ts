export { ANSWER_VIOLATION_BOUNDS, boundViolations } from './violation';
export type { BoundedViolations, Violation, ViolationBounds, ViolationSource } from './violation';
export { HttpError } from './http-error';
export { REFUSAL_REASONS } from './queues';
export type {
  BrowsedMessage,
  BrowseGate,
  QueueBrowse,
  DeadLetter,
  DeadLetterResolution,
  QueueOperations,
  QueueStats,
  ResolvedDeadLetter,
  RedriveOutcome,
  RedriveResult,
  RefusalReason,
  ReplayRequest,
  ReplayResult,
} from './queues';
export { coalesceCalls } from './coalesce';
export { pacedReads } from './paced-reads';
export { settleWithin } from './settle-within';
export { MAX_JSON_DEPTH, ijsonProblem, ijsonProblemText, parseIJson } from './strict-json';
export type { IJsonParsed, IJsonProblem } from './strict-json';
export { jsonPointer } from './json-pointer';
