export { SOM_VERSION, SOM_ENVELOPE_VERSION } from './message';
export type { SomMessage } from './message';
export type { Violation, ViolationSource } from '@bus/contracts';
export { RULES, isRuleId, splitTolerated, rulesCatalogue } from './rules';
export type { RuleDefinition, RuleId, RulesCatalogue } from './rules';
export { renderRulesMarkdown } from './rules-doc';
export { MESSAGE_TYPES } from './schema-set';
export { createSomValidator, parseJsonBody } from './validator';
export { contentHash } from './content-hash';
export type { ParsedBody, SomValidation, SomValidator, SomValidatorOptions } from './validator';
export { checkPolicy } from './policy';
export type { ProducerPermissions } from './policy';
export {
  applySequence,
  familyOf,
  parseStoryState,
  EMPTY_STORY_STATE,
  STORY_STATE_VERSION,
  StoryStateError,
  SequenceInputError,
} from './sequence';
export type { Family, GateState, LinkState, SequenceOutcome, StoryState, TellingState } from './sequence';
