/** Test support: the real library data, and a library with more versions built from it. */
import { skills as skillsData } from '@bus/schemas';
import { loadSkillLibrary, type SkillLibrary } from './library';

export type Json = Record<string, unknown>;

/** A fresh copy of the carried 0.2.2 data. */
export function libraryData(): Json {
  return structuredClone(skillsData.versions[0]) as Json;
}

/**
 * 0.2.2 (current) plus 0.2.1 (supported, where links/dead-end has no exempt_segment_kinds and
 * telling/locale-match does not exist yet) and 0.1.0 (retired): the versions a skill_version can select.
 */
export function threeVersionLibrary(): SkillLibrary {
  const current = libraryData();
  const supported = libraryData();
  supported.version = '0.2.1';
  supported.status = 'supported';
  supported.skills = (supported.skills as Json[])
    .filter((s) => s.skill_id !== 'telling/locale-match')
    .map((s) => (s.skill_id === 'links/dead-end' ? { ...s, fields: (s.fields as Json[]).filter((f) => f.name !== 'exempt_segment_kinds') } : s));
  const retired = libraryData();
  retired.version = '0.1.0';
  retired.status = 'retired';
  return loadSkillLibrary({ versions: [supported, current, retired] });
}

/** A valid configured instance of each skill of 0.2.2, keyed by skill_id. */
export const VALID: Readonly<Record<string, Json>> = {
  'continuity/character-voice': {
    skill_id: 'continuity/character-voice',
    instance_label: 'house voices',
    authority_scale: ['author', 'editor', 'narrator'],
    values: { voice_path: 'characters.voice.voice_id', narrator_overlap: 'forbid', defended_authority: 'editor', ignore_roles: ['minor'] },
    consumer: 'cq7voices2abc',
  },
  'continuity/canon-guard': {
    skill_id: 'continuity/canon-guard',
    instance_label: 'canon',
    authority_scale: ['author', 'editor'],
    values: { watch_paths: ['characters.name', 'setting.locale'], min_authority: 'author', severity_by_gap: { one_below: 'high' } },
  },
  'continuity/place-consistency': {
    skill_id: 'continuity/place-consistency',
    instance_label: 'places',
    values: { places_path: 'setting.places', tolerance: 'lenient' },
  },
  'audience/age-fit': {
    skill_id: 'audience/age-fit',
    instance_label: 'young listeners',
    values: { age_band_path: 'audience.age_band', rating_path: 'content.rating', max_rating_by_age: { '0-4': 'all_ages', '5-7': 'all_ages' } },
  },
  'audience/content-warnings': {
    skill_id: 'audience/content-warnings',
    instance_label: 'warnings',
    values: { warnings_path: 'content.warnings', must_announce: ['peril', 'violence'], announce_at: 'telling_start' },
  },
  'audience/accessibility-coverage': {
    skill_id: 'audience/accessibility-coverage',
    instance_label: 'captions',
    values: { needs_path: 'audience.accessibility', required_media: ['subtitles'], grace_period_ms: 5000 },
  },
  'links/dead-end': {
    skill_id: 'links/dead-end',
    instance_label: 'no dead ends',
    values: { min_open_links: 1, exempt_segment_kinds: ['recap'] },
  },
  'links/gate-authority': {
    skill_id: 'links/gate-authority',
    instance_label: 'gates',
    authority_scale: ['author', 'editor'],
    values: { allowed_changers: { audience: true, author: true, system: false }, override_authority: 'editor' },
  },
  'telling/pacing': {
    skill_id: 'telling/pacing',
    instance_label: 'speaker pacing',
    values: { max_segment_ms: { smart_speaker: 90000, web: 120000 }, max_telling_ms: 1200000, label: 'bedtime' },
  },
  'telling/locale-match': {
    skill_id: 'telling/locale-match',
    instance_label: 'locale',
    values: { locale_path: 'story.language', match: 'language' },
  },
};

/** A fresh copy of the valid instance of `skillId`, with `changes` merged at the top level. */
export function instance(skillId: string, changes: Json = {}): Json {
  const base = VALID[skillId];
  if (!base) throw new Error(`no valid instance of ${skillId}`);
  return { ...structuredClone(base), ...changes };
}

/** A fresh copy of the valid instance of `skillId` with `values` merged into its values. */
export function withValues(skillId: string, values: Json): Json {
  const base = instance(skillId);
  return { ...base, values: { ...(base.values as Json), ...values } };
}
