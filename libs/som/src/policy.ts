import type { SomMessage } from './message';
import { violation } from './rules';
import type { Violation } from '@bus/contracts';

/** What an app may publish (docs/api.md#authentication rule 5), read from the registry on every request. */
export interface ProducerPermissions {
  readonly systemIds: readonly string[];
  readonly messageTypes: readonly string[];
}

/** Policy rules (403): the message's system_id and message_type must both be allowed for the app. */
export function checkPolicy(message: Pick<SomMessage, 'system_id' | 'message_type'>, permissions: ProducerPermissions): Violation[] {
  const found: Violation[] = [];
  if (!permissions.systemIds.includes(message.system_id)) {
    found.push(violation('policy.system_id_not_allowed', `The app may not publish for system_id ${message.system_id}`, '/system_id'));
  }
  if (!permissions.messageTypes.includes(message.message_type)) {
    found.push(violation('policy.message_type_not_allowed', `The app may not publish message_type ${message.message_type}`, '/message_type'));
  }
  return found;
}
