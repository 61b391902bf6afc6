export { createCatalogueService } from './service';
