/** A JSON Schema (draft 2020-12) document as parsed from its file. */
export interface JsonSchemaDocument {
  readonly $schema: string;
  readonly $id: string;
  readonly [keyword: string]: unknown;
}

/** The SOM 1.0 schema set: files under som/1.0/. */
export interface SomSchemaSet {
  /** $defs shared by the envelope and the payloads (ids, timestamps, references). */
  readonly defs: JsonSchemaDocument;
  readonly envelope: JsonSchemaDocument;
  /** Payload schema per message type; the keys are the message types the bus has schemas for. */
  readonly payloads: Readonly<Record<string, JsonSchemaDocument>>;
  /**
   * The examples (examples/NN-<message_type>.json) in publishing order: one story under one
   * correlation id, one message per type, accepted in this order by an app allowed their system_ids.
   */
  readonly story: readonly unknown[];
  /** The same examples by message type. */
  readonly examples: Readonly<Record<string, unknown>>;
}

export declare const som: SomSchemaSet;

/** An OpenAPI 3.1 document as parsed from its file. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly [field: string]: unknown;
}

/**
 * OpenAPI documents under openapi/: `bus` for the bus host, `catalogue` for the portal's catalogue
 * routes, `admin` for the portal's operator admin API.
 */
export declare const openapi: {
  readonly bus: OpenApiDocument;
  readonly catalogue: OpenApiDocument;
  readonly admin: OpenApiDocument;
  readonly portal: OpenApiDocument;
};

/**
 * The skill library as authored: one entry per carried version, parsed from skills/<version>/
 * (library.json spread, plus skills.json as `skills`). Unchecked data: @bus/skills checks it.
 */
export declare const skills: { readonly versions: readonly unknown[] };
