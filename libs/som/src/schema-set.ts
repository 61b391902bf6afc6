import { som } from '@bus/schemas';
import type { ValidateFunction } from 'ajv';
// ajv/dist/2020 is ajv's documented entry point for draft 2020-12.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The message types the bus has schemas for (docs/api.md#health), sorted: the payload schemas that exist. */
export const MESSAGE_TYPES: readonly string[] = Object.freeze(Object.keys(som.payloads).sort());

export interface CompiledSchemas {
  readonly envelope: ValidateFunction;
  readonly payloads: ReadonlyMap<string, ValidateFunction>;
}

/** Compiles the SOM 1.0 schemas. Costly (tens of milliseconds): do it once per process. */
export function compileSomSchemas(): CompiledSchemas {
  // allErrors: report every violation at once. strict: an unknown keyword or a typo in a schema fails
  // here, at start-up, instead of being silently ignored.
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv, ['date-time', 'uri', 'uuid']);
  ajv.addSchema(som.defs);
  return {
    envelope: ajv.compile(som.envelope),
    payloads: new Map(Object.entries(som.payloads).map(([type, schema]) => [type, ajv.compile(schema)])),
  };
}
