export { processClients } from './clients';
export type { AllProcessClients, Client, ProcessClients } from './clients';
