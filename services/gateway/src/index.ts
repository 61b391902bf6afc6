export { gatewayServiceOf } from './service';
export { KnexPublishStore } from './publish-store';
export type { PublishStore } from './publish-store';
export { kafkaCommitter } from './kafka-commit';
export { gatewayConfig } from './config';
export { managedAppsOf, parseManagedApps } from './managed-apps';
export { createGroupCommitter } from './group-commit';
export type { GroupCommitter, PublishToCommit } from './group-commit';
export { PUBLISH_QUOTA_ROUTES } from './publish-routes';
