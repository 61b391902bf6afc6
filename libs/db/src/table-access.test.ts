import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '@bus/testing';
import { TABLE_COLUMNS } from './tables';

/**
 * The store modules allowed to name tables outside libs/db (README "Layout"): each owns the queries of
 * its service over the typed tables of tables.ts. Anything else reaches the database through one of
 * them, or through libs/db's own readers.
 */
const STORE_MODULES = [
  'libs/identity/src/admin.ts',
  'libs/identity/src/connection-use.ts',
  'libs/identity/src/principals.ts',
  'libs/identity/src/providers.ts',
  'libs/identity/src/quota.ts',
  'libs/identity/src/store.ts',
  'libs/queue/src/dead-letters.ts',
  'libs/queue/src/delivery-store.ts',
  'libs/queue/src/message-trace.ts',
  'libs/queue/src/retention.ts',
  'services/all-in-one/src/seed.ts',
  'services/auth/src/signing-keys.ts',
  'services/gateway/src/publish-store.ts',
  'services/portal/src/admin-store.ts',
  'services/portal/src/people/people-store.ts',
];

/** The queue's statements, one a file (libs/queue/src/sql/statement.ts), each for its store module. */
const STATEMENT_DIRECTORY = 'libs/queue/src/sql/';

/** SQL naming one of `tables`, and knex's table argument naming one ('deliveries', 'connections as c'). */
function tablePatterns(tables: readonly string[]): { sql: RegExp; argument: RegExp } {
  const names = tables.join('|');
  return { sql: new RegExp(`\\b(FROM|JOIN|INTO|UPDATE|TABLE)\\s+(${names})\\b`), argument: new RegExp(`^(${names})( as \\w+)?$`) };
}
const ANY_TABLE = tablePatterns(Object.keys(TABLE_COLUMNS));
/** The consumer queues' tables: their SQL stays in libs/queue (docs/architecture.md#tables). */
const QUEUE_TABLES = tablePatterns(['deliveries', 'dead_letters']);
/** What takes a table name first: the knex instance or a transaction, and the builder's from, join and into. */
const TAKES_A_TABLE = /(^|\.)(db|trx|knex|from|into|table|join|leftJoin|innerJoin)$/;

/** Whether the TypeScript source names a table: in SQL text, or as a knex table argument. */
function namesATable(file: string, tables = ANY_TABLE): boolean {
  const source = ts.createSourceFile(file, readFileSync(path.join(REPO_ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  let found = false;
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) && tables.sql.test(node.text))
      found = true;
    if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      if (first && ts.isStringLiteralLike(first) && tables.argument.test(first.text) && TAKES_A_TABLE.test(node.expression.getText(source))) found = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Product modules: not tests or test support. */
const productFiles = () =>
  execFileSync('git', ['ls-files', 'libs/*.ts', 'services/*.ts', 'cli/*.ts'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !/\.test\.ts$|test-support\.ts$|\/testing\/|^libs\/fixtures\//.test(f));

describe('table layouts stay behind libs/db and the store modules', () => {
  it('no other product module names a table', () => {
    const files = productFiles().filter((f) => !f.startsWith('libs/db/'));
    const offenders = files.filter((f) => !STORE_MODULES.includes(f) && !f.startsWith(STATEMENT_DIRECTORY) && namesATable(f));
    expect(offenders).toEqual([]);
  });

  // Every statement on the queues' tables is one file of libs/queue/src/sql/ saying why it is written
  // that way, so a change of the queue's layout or locking is reviewed in one place. Migrations create
  // the tables; tests may arrange and read their rows directly.
  it('keeps SQL on deliveries and dead_letters in libs/queue', () => {
    const files = productFiles().filter((f) => !f.startsWith('libs/queue/') && !f.includes('/migrations/'));
    expect(files.filter((f) => namesATable(f, QUEUE_TABLES))).toEqual([]);
  });

  it('finds every store module naming a table, so the list holds no stale entry', () => {
    expect(STORE_MODULES.filter((f) => !namesATable(f))).toEqual([]);
  });
});
