import type { Knex } from 'knex';
import * as tenancy from './001_tenancy';
import * as signingKeys from './002_signing_keys';
import * as publish from './003_publish';
import * as delivery from './004_delivery';
import * as admin from './005_admin';
import * as messageTraceparent from './006_message_traceparent';
import * as quarantineListing from './007_quarantine_listing';
import * as retention from './008_retention';
import * as testerTools from './009_tester_tools';
import * as awsPrincipals from './010_aws_principals';
import * as identityProviders from './011_identity_providers';
import * as consumerTools from './012_consumer_tools';
import * as portalPeople from './013_portal_people';
import * as hotLeases from './014_hot_leases';
import * as pendingByAge from './015_pending_by_age';
import * as acceptedBodyDigest from './016_accepted_body_digest';
import * as messageBodyLz4 from './017_message_body_lz4';
import * as dropDuplicateStoryIndex from './018_drop_duplicate_story_index';
import * as refusalViolationsOmitted from './019_refusal_violations_omitted';
import * as deliveryHeads from './020_delivery_heads';
import * as dropPendingByAge from './021_drop_pending_by_age';
import * as testRuns from './022_test_runs';
import * as runValidations from './023_run_validations';
import * as connectionNames from './024_connection_names';
import * as activityMinutes from './025_activity_minutes';
import * as deliveryPurgedAt from './026_delivery_purged_at';
import * as deliveryMessageIndex from './027_delivery_message_index';
import * as deliveriesWithoutForeignKeys from './028_deliveries_without_foreign_keys';
import * as dropDeliveriesEnqueuedAt from './029_drop_deliveries_enqueued_at';
import * as bindingsByProvider from './030_bindings_by_provider';
import * as deadLettersOutOfHeads from './031_dead_letters_out_of_heads';

interface NamedMigration {
  name: string;
  /** `config.transaction: false` runs that migration outside a transaction (knex reads it). */
  migration: Knex.Migration & { config?: { transaction: boolean } };
}

/**
 * Every migration, in order. Listed in code rather than read from a directory so they run the same
 * from TypeScript sources (tests) and compiled output (services), and bundle into the image.
 */
const MIGRATIONS: readonly NamedMigration[] = [
  { name: '001_tenancy', migration: tenancy },
  { name: '002_signing_keys', migration: signingKeys },
  { name: '003_publish', migration: publish },
  { name: '004_delivery', migration: delivery },
  { name: '005_admin', migration: admin },
  { name: '006_message_traceparent', migration: messageTraceparent },
  { name: '007_quarantine_listing', migration: quarantineListing },
  { name: '008_retention', migration: retention },
  { name: '009_tester_tools', migration: testerTools },
  { name: '010_aws_principals', migration: awsPrincipals },
  { name: '011_identity_providers', migration: identityProviders },
  { name: '012_consumer_tools', migration: consumerTools },
  { name: '013_portal_people', migration: portalPeople },
  { name: '014_hot_leases', migration: hotLeases },
  { name: '015_pending_by_age', migration: pendingByAge },
  { name: '016_accepted_body_digest', migration: acceptedBodyDigest },
  { name: '017_message_body_lz4', migration: messageBodyLz4 },
  { name: '018_drop_duplicate_story_index', migration: dropDuplicateStoryIndex },
  { name: '019_refusal_violations_omitted', migration: refusalViolationsOmitted },
  { name: '020_delivery_heads', migration: deliveryHeads },
  { name: '021_drop_pending_by_age', migration: dropPendingByAge },
  { name: '022_test_runs', migration: testRuns },
  { name: '023_run_validations', migration: runValidations },
  { name: '024_connection_names', migration: connectionNames },
  { name: '025_activity_minutes', migration: activityMinutes },
  { name: '026_delivery_purged_at', migration: deliveryPurgedAt },
  { name: '027_delivery_message_index', migration: deliveryMessageIndex },
  { name: '028_deliveries_without_foreign_keys', migration: deliveriesWithoutForeignKeys },
  { name: '029_drop_deliveries_enqueued_at', migration: dropDeliveriesEnqueuedAt },
  { name: '030_bindings_by_provider', migration: bindingsByProvider },
  { name: '031_dead_letters_out_of_heads', migration: deadLettersOutOfHeads },
];

export const migrationSource: Knex.MigrationSource<NamedMigration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m.migration,
};
