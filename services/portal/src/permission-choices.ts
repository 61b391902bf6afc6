import { som } from '@bus/schemas';
import { AdminRequestInvalidError } from './errors';

/** The catalogue's message types: what an app's permissions are chosen from. */
export const MESSAGE_TYPES: readonly string[] = Object.keys(som.payloads).sort();

const SYSTEM_ID = new RegExp((som.defs.$defs as { system_id: { pattern: string } }).system_id.pattern);

/**
 * What a person (or the operator, through the admin API) sets as an app's permissions holds only the catalogue's message types and system ids
 * of the SOM's form (a message with anything else could never be published): else a 400 in plain words,
 * naming the field for the page to put it beside.
 */
export function requireKnownPermissions(permissions: { systemIds: readonly string[]; messageTypes: readonly string[] }): void {
  const unknownType = permissions.messageTypes.find((type) => !MESSAGE_TYPES.includes(type));
  if (unknownType !== undefined)
    throw new AdminRequestInvalidError(`body "message_types" holds ${JSON.stringify(unknownType.slice(0, 80))}, which is not a message type of the catalogue`);
  const badId = permissions.systemIds.find((id) => !SYSTEM_ID.test(id) || id.length > 64);
  if (badId !== undefined)
    throw new AdminRequestInvalidError(
      `body "system_ids" holds ${JSON.stringify(badId.slice(0, 80))}, which is not a system id: a dotted lowercase name such as storyteller.web`,
    );
}
