import { HttpError } from '@bus/http';

/** 404 skills.version_unknown (spec 4.3, 7.3): ?version names no carried library version. */
export class SkillsVersionUnknownError extends HttpError {
  override readonly name = 'SkillsVersionUnknownError';
  constructor(asked: string, carried: readonly string[]) {
    super(404, 'skills.version_unknown', `Library version ${asked} is not carried (carried: ${carried.join(', ')})`);
  }
}

/**
 * 400 skills.unreadable (spec 4.3, 7.3): the validation body is empty, over 256 KB, neither JSON nor
 * YAML, or a file without a skills: section. The reason never quotes the body.
 */
export class SkillsUnreadableError extends HttpError {
  override readonly name = 'SkillsUnreadableError';
  constructor(reason: string) {
    super(400, 'skills.unreadable', reason);
  }
}
