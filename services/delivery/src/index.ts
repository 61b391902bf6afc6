export { createDeliveryService } from './service';
export type { DeliveryServiceDeps } from './service';
