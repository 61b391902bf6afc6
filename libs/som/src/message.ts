/** The SOM version the bus implements, as GET /v1/health reports it (docs/api.md#health, #versioning). */
export const SOM_VERSION = '1.0.0';

/** The value of a message's som_version field: SOM versions messages by major.minor. */
export const SOM_ENVELOPE_VERSION = '1.0';

/**
 * A message that passed schema and conformance validation: the envelope of schemas/som/1.0/envelope.json.
 * It is the parsed body itself, never a copy, because the bus never changes a message.
 */
export interface SomMessage {
  readonly som_version: string;
  readonly message_id: string;
  readonly message_type: string;
  readonly correlation_id: string;
  readonly system_id: string;
  readonly occurred_at: string;
  /** Checked by the payload schema of message_type. */
  readonly payload: Readonly<Record<string, unknown>>;
}
