/**
 * Test support for this package's unit tests: the examples of @bus/schemas as fresh mutable copies,
 * edited by JSON Pointer, and what it means for a violation's path to resolve in a message.
 */
import { som } from '@bus/schemas';
import type { SomMessage } from './message';
import { createSomValidator } from './validator';

/** The bus clock of the tests; the examples happened shortly before it. */
export const TEST_NOW = new Date('2026-11-22T10:00:00Z');

export const testValidator = () => createSomValidator({ now: () => TEST_NOW });

/** Deletes the value at a pointer when used as a value in `exampleWith`. */
export const REMOVE = Symbol('remove');

export type Json = Record<string, unknown>;

/** A fresh copy of the example of a message type. */
export function example(messageType: string): Json {
  if (!Object.hasOwn(som.examples, messageType)) throw new Error(`No example for ${messageType}`);
  return structuredClone(som.examples[messageType]) as Json;
}

/** The example with the value at each pointer replaced (or removed, for REMOVE). */
export function exampleWith(messageType: string, changes: Readonly<Record<string, unknown>>): Json {
  const message = example(messageType);
  for (const [at, value] of Object.entries(changes)) setAt(message, at, value);
  return message;
}

/** The example as a validated message, for the steps that take one (policy, sequence). */
export function exampleMessage(messageType: string, changes: Readonly<Record<string, unknown>> = {}): SomMessage {
  return exampleWith(messageType, changes) as unknown as SomMessage;
}

export function tokensOf(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`Not a JSON Pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Sets (or, with REMOVE, deletes) the value at a pointer whose parent exists. */
export function setAt(document: unknown, pointer: string, value: unknown): void {
  const tokens = tokensOf(pointer);
  const last = tokens.pop();
  const parent = tokens.reduce<unknown>((node, token) => childOf(node, token).value, document);
  if (last === undefined || typeof parent !== 'object' || parent === null) throw new Error(`No parent at ${pointer}`);
  if (Array.isArray(parent) && value === REMOVE) parent.splice(Number(last), 1);
  else if (value === REMOVE) Reflect.deleteProperty(parent, last);
  // defineProperty, as JSON.parse does: a key such as __proto__ becomes an own property.
  else Object.defineProperty(parent, last, { value, writable: true, enumerable: true, configurable: true });
}

function childOf(node: unknown, token: string): { found: boolean; value: unknown } {
  if (Array.isArray(node)) {
    const found = /^(0|[1-9][0-9]*)$/.test(token) && Number(token) < node.length;
    return { found, value: found ? node[Number(token)] : undefined };
  }
  if (typeof node === 'object' && node !== null && Object.hasOwn(node, token)) {
    return { found: true, value: (node as Json)[token] };
  }
  return { found: false, value: undefined };
}

/**
 * Whether a violation's path resolves in the submitted message: every token names an existing member
 * (an own property of an object, or an index inside an array). A schema.required path names a property
 * that is missing by definition, so for it the parent must resolve to an object that lacks the property.
 */
export function pathResolves(document: unknown, pointer: string, rule: string): boolean {
  const tokens = tokensOf(pointer);
  const missingOne = rule === 'schema.required' ? tokens.pop() : undefined;
  let node = document;
  for (const token of tokens) {
    const child = childOf(node, token);
    if (!child.found) return false;
    node = child.value;
  }
  if (missingOne === undefined) return true;
  return typeof node === 'object' && node !== null && !Array.isArray(node) && !Object.hasOwn(node, missingOne);
}
