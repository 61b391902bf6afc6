import { HttpError } from '@bus/http';

/** 404 skills.version_unknown (docs/api.md#skill-catalogue, #errors): ?version names no carried library version. */
export class SkillsVersionUnknownError extends HttpError {
  override readonly name = 'SkillsVersionUnknownError';
  constructor(asked: string, carried: readonly string[]) {
    super(404, 'skills.version_unknown', `Library version ${asked} is not carried (carried: ${carried.join(', ')})`);
  }
}

/**
 * 400 skills.unreadable (docs/api.md#skill-catalogue, #errors): the validation body is empty, over 256 KB, neither JSON nor
 * YAML, or a file without a skills: section. The reason never quotes the body.
 */
export class SkillsUnreadableError extends HttpError {
  override readonly name = 'SkillsUnreadableError';
  constructor(reason: string) {
    super(400, 'skills.unreadable', reason);
  }
}
