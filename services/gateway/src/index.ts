export { createGatewayService, publishDepsOf, signedRoutesOf } from './service';
export type { GatewayServiceDeps } from './service';
export { KnexPublishStore } from './publish-store';
export type { PublishStore } from './publish-store';
export { kafkaCommitter } from './kafka-commit';
export { gatewayConfig } from './config';
export { createGroupCommitter } from './group-commit';
export type { GroupCommitter, PublishToCommit } from './group-commit';
