export { createGatewayService } from './service';
export type { GatewayServiceDeps } from './service';
