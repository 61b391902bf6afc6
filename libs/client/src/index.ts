export { BusProducer } from './producer';
export type {
  PublishResult,
  Publishable,
  MessageTrace,
  DeliveryTrace,
  DeliveryStateName,
  InjectedFault,
  RecentRefusals,
  StoryView,
  StoryExport,
  StoryExportLine,
} from './producer';
export { BusConsumer } from './consumer';
export type { ConsumerOptions, ConsumerState, MessageHandler, ReceivedMessage, SettleResult } from './consumer';
export { TokenSource } from './token';
export type { ClientOptions } from './token';
export { BusRefusedError, BusUnreachableError, TokenRequestError } from './errors';
export type { Violation } from './errors';
export { retryAfterSeconds } from './wait';
export { CTRF_SPEC_VERSION, ctrfJson, junitXml, violationLine } from './reports';
export { publishStories } from './simulation';
export { BusTestRuns, runReportFiles, runTestReport } from './runs';
export type { TestRun, RunMessage, RunReport, Span } from './runs';
export type { CaseOutcome, ReportCase, TestReport } from './reports';
export type { SimulationCounts, SimulationEvent, SimulationOptions, StoryMessage } from './simulation';
