/** The skill library as the catalogue answers it (docs/api.md#skill-library). */

export type LibraryStatus = 'current' | 'supported' | 'retired';

/** `schema`: SOM 1.0 defines the message type and `schema` names its schema; `pending-spec`: no 1.0 schema yet. */
export type RecallSpec = 'schema' | 'pending-spec';

export interface RecallOn {
  message_type: string;
  spec: RecallSpec;
  /** The $id of the SOM 1.0 payload schema of message_type; only when spec is `schema`. */
  schema?: string;
}

export interface SkillField {
  name: string;
  kind: string;
  required: boolean;
  /** For an enum (and enum_list) the allowed values, for a row its keys; empty otherwise. */
  options: string[];
  about: string;
}

export interface SkillRecord {
  /** `<group>/<name>`. */
  skill_id: string;
  name: string;
  /** The library version that carries the skill: an instance's skill_version selects it. */
  skill_version: string;
  category: string;
  severity_range: string[];
  /** `required`: the skill compares authorities, so a configured instance must carry the house's scale. */
  authority_scale: 'required' | 'optional';
  recall_on: RecallOn[];
  fields: SkillField[];
}

export interface LibraryInfo {
  version: string;
  status: LibraryStatus;
  /** Combines the SOM and library versions, e.g. som-1.0-skills-0.2.2. */
  suite: string;
  som_version: string;
  /** A link to the pinned library source. */
  source: string;
  source_commit: string;
}

export interface LibraryVersionSummary {
  version: string;
  status: LibraryStatus;
  suite: string;
}

export interface Topic {
  message_type: string;
  spec: RecallSpec;
}

/** GET /api/skills/library (docs/api.md#skill-library). */
export interface LibraryAnswer {
  library: LibraryInfo;
  /** Newest first. */
  versions: LibraryVersionSummary[];
  skills: SkillRecord[];
  topics: Topic[];
  field_kinds: Record<string, string>;
}

/** One carried library version: the answer's data plus what only docs show. */
export interface LibraryVersion {
  info: LibraryInfo;
  skills: readonly SkillRecord[];
  /** Per skill_id, the skill's description (docs/skills.md; not part of the answer). */
  about: ReadonlyMap<string, string>;
}

/** What a validation checked (docs/api.md#skill-library `checked`). */
export type Checked = 'instance' | 'list' | 'file';

export interface InstanceResult {
  index: number;
  instance_label: string | null;
  skill_id: string | null;
  valid: boolean;
  /** One-line, stable problem strings. */
  problems: string[];
}

/** POST /api/skills/validate (docs/api.md#skill-library). */
export interface ValidationAnswer {
  valid: boolean;
  /** The current library version. */
  library_version: string;
  checked: Checked;
  instances: InstanceResult[];
  /** Problems of the input as a whole. */
  problems: string[];
}
