export { BusProducer } from './producer';
export type { PublishResult, Publishable, MessageTrace, DeliveryTrace, RecentRefusals, StoryView } from './producer';
export { BusConsumer } from './consumer';
export type { ConsumerOptions, MessageHandler, ReceivedMessage, SettleResult } from './consumer';
export { TokenSource } from './token';
export type { ClientOptions } from './token';
export { BusRefusedError, BusUnreachableError, TokenRequestError } from './errors';
export type { Violation } from './errors';
export { retryAfterSeconds } from './wait';
