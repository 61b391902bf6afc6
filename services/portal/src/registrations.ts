import type { Request } from 'express';
import type { SkillRegistration } from '@bus/db';
import { MessageTooLargeError, readBody } from '@bus/http';
import { checkSkillsInput, MAX_BODY_BYTES, readSkillsBody, type SkillLibrary, type ValidationAnswer } from '@bus/skills';
import type { AdminStore } from './admin-store';
import { requireActiveConsumer } from './consumer-queues';
import { AdminNotFoundError, AdminRequestInvalidError, RegistrationInvalidError } from './errors';

/**
 * A consumer connection's skill registrations, as the admin API and the portal for people both read
 * and change them (docs/admin.md, docs/portal.md). A skills file is read and checked exactly as
 * POST /api/skills/validate reads and checks it: one answer, one set of problems, wherever it is sent.
 */
export interface RegistrationOperations {
  list(clientId: string): Promise<SkillRegistration[]>;
  /** The catalogue's answer to the request's skills file (nothing is saved). */
  check(req: Request): Promise<ValidationAnswer>;
  /** Registers every instance of the request's skills file, all or none: 422 with the catalogue's answer when one fails its checks. */
  register(clientId: string, req: Request): Promise<SkillRegistration[]>;
  remove(clientId: string, registrationId: string): Promise<void>;
}

export function registrationOperations(deps: {
  store: Pick<AdminStore, 'connection' | 'registrations' | 'addRegistrations' | 'removeRegistration'>;
  library: SkillLibrary;
}): RegistrationOperations {
  const connectionOf = async (id: string) => (await deps.store.connection(id)) ?? notFound('connection', id);
  const readChecked = async (req: Request) => {
    const bytes = await readBody(req, MAX_BODY_BYTES).catch((err: unknown) => {
      if (err instanceof MessageTooLargeError) throw new AdminRequestInvalidError(`The body is over ${MAX_BODY_BYTES} bytes (256 KB)`);
      throw err;
    });
    const read = readSkillsBody(bytes, req.header('content-type'));
    if (!read.ok) throw new AdminRequestInvalidError(read.reason);
    return { input: read.input, answer: checkSkillsInput(deps.library, read.input) };
  };
  return {
    list: async (clientId) => deps.store.registrations((await connectionOf(clientId)).client_id),
    check: async (req) => (await readChecked(req)).answer,
    register: async (clientId, req) => {
      const connection = requireActiveConsumer(await connectionOf(clientId));
      const { input, answer } = await readChecked(req);
      if (!answer.valid) throw new RegistrationInvalidError(answer);
      const instances = (input.checked === 'instance' ? [input.instance] : (input.items as unknown[])) as Array<Record<string, unknown>>;
      if (instances.length === 0) throw new AdminRequestInvalidError('The body holds no skill instance to register');
      // A label already registered is the store's RegistrationLabelTakenError, a 409.
      return deps.store.addRegistrations(
        connection.client_id,
        instances.map((instance) => ({
          instanceLabel: String(instance.instance_label),
          libraryVersion: typeof instance.skill_version === 'string' ? instance.skill_version : deps.library.current.info.version,
          instance,
        })),
      );
    },
    remove: async (clientId, registrationId) => {
      const connection = await connectionOf(clientId);
      if (!(await deps.store.removeRegistration(connection.client_id, registrationId))) notFound('registration', registrationId);
    },
  };
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}
