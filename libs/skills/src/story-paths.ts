/**
 * The dot paths of the SOM 1.0 story.context payload, read from its JSON Schema: `audience.age_band`,
 * and through arrays by naming the array, `characters.voice.voice_id` (SOM's `story_path`). A path
 * may name an object (`audience.accessibility`) as well as a leaf.
 */

type Schema = Readonly<Record<string, unknown>>;

const DEFS_REF = /^(?:\.\.\/defs\.json)?#\/\$defs\/([A-Za-z0-9_]+)$/;

export function storyContextPaths(storyContext: Schema, defs: Schema): ReadonlySet<string> {
  const defsTable = (defs.$defs ?? {}) as Record<string, Schema>;
  const paths = new Set<string>();

  const resolve = (schema: Schema, seen: number): Schema => {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const m = DEFS_REF.exec(ref);
    const target = m?.[1] === undefined ? undefined : defsTable[m[1]];
    if (!target || seen > 20) throw new Error(`story.context schema: cannot resolve $ref ${ref}`);
    return resolve(target, seen + 1);
  };

  const walk = (raw: Schema, prefix: string): void => {
    let schema = resolve(raw, 0);
    if (schema.type === 'array' && typeof schema.items === 'object' && schema.items !== null) {
      schema = resolve(schema.items as Schema, 0);
    }
    const properties = schema.properties as Record<string, Schema> | undefined;
    if (!properties) return;
    for (const [name, child] of Object.entries(properties)) {
      const path = prefix === '' ? name : `${prefix}.${name}`;
      paths.add(path);
      walk(child, path);
    }
  };
  walk(storyContext, '');
  return paths;
}
