import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors';

/**
 * node:util parseArgs, strict, refusing an option of one value given twice: parseArgs keeps the last
 * silently, so `--name a --name b` (or two --url) would act on a value the operator may not have
 * meant, where the API itself refuses a repeated parameter. Options declared `multiple` repeat freely.
 */
export function parseCommandOptions<T extends Omit<ParseArgsConfig, 'strict' | 'tokens'>>(config: T) {
  const parsed = parseArgs({ ...config, strict: true, tokens: true });
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || config.options?.[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  return parsed;
}
