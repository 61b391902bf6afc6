import path from 'node:path';
import ts from 'typescript';
import { openapi } from '@bus/schemas';

// busctl declares the admin API's bodies by hand, or takes them from the client library: this compares
// those types with schemas/openapi/admin.json, so the CLI and the portal cannot drift apart unnoticed.

/** busctl's view type → the document's schema(s) it reads; two when one type reads both answers. */
const VIEWS: Record<string, string[]> = {
  Quota: ['Quota'],
  Organisation: ['Organisation'],
  Workspace: ['Workspace'],
  App: ['App'],
  Connection: ['Connection'],
  IssuedCredential: ['IssuedCredential', 'RotatedCredential'],
  Registration: ['Registration'],
  QueueStats: ['QueueStats'],
  QueuePurged: ['QueuePurged'],
  Replay: ['Replay'],
  QuarantinedRecord: ['QuarantinedRecord'],
  QuarantinePage: ['QuarantinePage'],
  RedriveResult: ['RedriveResult'],
  RedriveAnswer: ['RedriveAnswer'],
  MessageTrace: ['MessageTrace'],
  Principal: ['Principal'],
  IdentityProvider: ['IdentityProvider'],
  Binding: ['Binding'],
  BindingList: ['BindingPage'],
  ConsumerFaults: ['ConsumerFaults'],
  ConsumerTools: ['ConsumerTools'],
  DeadLetter: ['DeadLetter'],
  DeadLetterList: ['DeadLetterList'],
  ResolvedDeadLetter: ['ResolvedDeadLetter'],
  IssuedPrincipal: ['IssuedPrincipal'],
  PrincipalChallenge: ['PrincipalChallenge'],
  ApiErrorBody: ['Error', 'RegistrationRefused'],
};

/** A JSON Schema as the admin document writes them (the keywords this comparison reads). */
interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
}

/** What a TypeScript type accepts, in JSON's terms. */
interface Shape {
  unknown: boolean;
  null: boolean;
  string: boolean;
  number: boolean;
  boolean: boolean;
  literals: Set<unknown>;
  array?: Shape;
  object?: Map<string, { optional: boolean; shape: Shape }>;
}

const document = openapi.admin as unknown as { components: { schemas: Record<string, Schema> } };

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = document.components.schemas[name];
  if (!target) throw new Error(`unresolved ${schema.$ref}`);
  return resolve(target);
}

function shapeOf(checker: ts.TypeChecker, type: ts.Type): Shape {
  const shape: Shape = { unknown: false, null: false, string: false, number: false, boolean: false, literals: new Set() };
  for (const member of type.isUnion() ? type.types : [type]) {
    const flags = member.flags;
    if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) shape.unknown = true;
    else if (flags & ts.TypeFlags.Null) shape.null = true;
    else if (flags & ts.TypeFlags.Undefined)
      continue; // optionality is the property's, read from its symbol
    else if (flags & ts.TypeFlags.String) shape.string = true;
    else if (flags & ts.TypeFlags.Number) shape.number = true;
    else if (flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) shape.boolean = true;
    else if (member.isStringLiteral() || member.isNumberLiteral()) shape.literals.add(member.value);
    else if (checker.isArrayType(member)) shape.array = shapeOf(checker, checker.getTypeArguments(member as ts.TypeReference)[0] as ts.Type);
    else if (flags & ts.TypeFlags.Object) {
      shape.object = new Map(
        member
          .getProperties()
          .map((property) => [
            property.name,
            { optional: (property.flags & ts.SymbolFlags.Optional) !== 0, shape: shapeOf(checker, checker.getTypeOfSymbol(property)) },
          ]),
      );
    } else throw new Error(`unsupported type ${checker.typeToString(member)}`);
  }
  return shape;
}

const jsonTypes = (schema: Schema): string[] => (schema.type === undefined ? [] : [schema.type].flat());
const valuesOf = (schema: Schema): unknown[] | undefined => schema.enum ?? (schema.const === undefined ? undefined : [schema.const]);

/** Problems where busctl's `shape` would not accept a value `schema` allows. */
function accepts(shape: Shape, given: Schema, at: string): string[] {
  const schema = resolve(given);
  if (shape.unknown) return [];
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return objectAccepts(shape, [schema], at);
  const types = jsonTypes(schema);
  const problems: string[] = [];
  if (types.includes('null') && !shape.null) problems.push(`${at}: the document allows null, busctl's type does not`);
  const values = valuesOf(schema);
  if (values) {
    const missing = values.filter((value) => value !== null && !shape.literals.has(value) && !shape[typeof value as 'string' | 'number' | 'boolean']);
    if (missing.length > 0) problems.push(`${at}: busctl's type lacks ${missing.map((value) => JSON.stringify(value)).join(', ')}`);
    return problems;
  }
  if (types.includes('string') && !shape.string) problems.push(`${at}: the document sends a string`);
  if ((types.includes('integer') || types.includes('number')) && !shape.number) problems.push(`${at}: the document sends a number`);
  if (types.includes('boolean') && !shape.boolean) problems.push(`${at}: the document sends true/false`);
  if (types.includes('array')) problems.push(...(shape.array ? accepts(shape.array, schema.items ?? {}, `${at}[]`) : [`${at}: the document sends a list`]));
  if (types.includes('object') || schema.properties)
    problems.push(...(shape.object ? objectAccepts(shape, [schema], at) : [`${at}: the document sends an object`]));
  return problems;
}

/**
 * busctl's object type against each of the document's variants of that object: it reads every
 * field the document defines (none missing, none renamed) and no other, unless the document leaves
 * the object open; it requires only fields each variant sends; and each field accepts what is sent.
 */
function objectAccepts(shape: Shape, schemas: Schema[], at: string): string[] {
  const variants = schemas.flatMap((schema) => (schema.oneOf ?? schema.anyOf ?? [schema]).map(resolve));
  const fields = shape.object;
  if (!fields) return [`${at}: the document sends an object`];
  const problems: string[] = [];
  const documented = new Map<string, Schema[]>();
  for (const variant of variants) {
    const sent = new Set([...Object.keys(variant.properties ?? {}), ...(variant.required ?? [])]);
    for (const name of sent) documented.set(name, [...(documented.get(name) ?? []), variant.properties?.[name] ?? {}]);
    for (const [name, field] of fields) {
      const fieldSchema = variant.properties?.[name];
      if (!field.optional && !(variant.required ?? []).includes(name))
        problems.push(`${at}.${name}: required in busctl's type, optional or absent in the document`);
      if (fieldSchema) problems.push(...accepts(field.shape, fieldSchema, `${at}.${name}`));
    }
  }
  const open = variants.some((variant) => variant.additionalProperties !== false);
  for (const [name, field] of fields) {
    const schemas = documented.get(name);
    if (!schemas) {
      if (!open || !field.optional) problems.push(`${at}.${name}: busctl's type has it, the document does not`);
      continue;
    }
    // A literal busctl expects but the document never sends: a value renamed or removed.
    const sent = schemas.map((schema) => valuesOf(resolve(schema)));
    if (field.shape.literals.size > 0 && sent.every((values) => values !== undefined)) {
      const never = [...field.shape.literals].filter((literal) => !sent.some((values) => values?.includes(literal)));
      if (never.length > 0) problems.push(`${at}.${name}: the document never sends ${never.map((value) => JSON.stringify(value)).join(', ')}`);
    }
  }
  for (const name of documented.keys()) if (!fields.has(name)) problems.push(`${at}.${name}: in the document, missing from busctl's type`);
  return problems;
}

describe("busctl's view types against the admin OpenAPI document", () => {
  const file = path.join(__dirname, 'api.ts');
  const program = ts.createProgram([file], { strict: true, noEmit: true, types: [], moduleResolution: ts.ModuleResolutionKind.Node10 });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`cannot read ${file}`);
  // Its own interfaces, and the types it re-exports from the client library (declared there once).
  const reexported = source.statements
    .filter(ts.isExportDeclaration)
    .flatMap((declaration) => (declaration.exportClause && ts.isNamedExports(declaration.exportClause) ? [...declaration.exportClause.elements] : []))
    .map((element) => [element.name.text, checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(checker.getSymbolAtLocation(element.name)!))] as const);
  const declared = new Map([
    ...source.statements.filter(ts.isInterfaceDeclaration).map((declaration) => [declaration.name.text, checker.getTypeAtLocation(declaration.name)] as const),
    ...reexported,
  ]);

  it('covers every body type busctl declares', () => {
    expect([...declared.keys()].sort()).toEqual(Object.keys(VIEWS).sort());
  });

  it.each(Object.entries(VIEWS))('%s reads what the document sends (%s)', (name, schemaNames) => {
    const type = declared.get(name);
    if (!type) throw new Error(`api.ts declares no ${name}`);
    const variants = schemaNames.map((schemaName) => resolve({ $ref: `#/components/schemas/${schemaName}` }));
    expect(objectAccepts(shapeOf(checker, type), variants, name)).toEqual([]);
  });
});
