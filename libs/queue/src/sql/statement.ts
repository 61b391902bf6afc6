/**
 * A statement of this directory: the text a call sends and, for a prepared one, the name it is prepared
 * under (libs/db preparedQuery). Each file here holds one statement, its top comment saying why it is
 * written that way; a file whose statement has variants (a receive gate, a peek filter, a nack or a
 * lost ack) exports a function of them, each variant its own text. The statements are TypeScript
 * modules rather than .sql files read at start-up because the build is the compiler alone and the
 * image carries each package's dist/ only.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** A statement named after its file (`queue.<file>`, with its variant's suffix). */
export function statement(name: string, text: string): Statement {
  return { name: `queue.${name}`, text };
}
