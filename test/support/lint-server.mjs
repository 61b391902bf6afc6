// One ESLint instance with the project's eslint.config.mjs, answering lint requests for
// test/lint-boundaries.test.ts: a JSON line { id, file, code } in, a JSON line { id, messages } out
// ("rule: message" per problem). A child process because the config is an ES module, which jest's
// module runtime cannot import; one process because starting eslint per case took a minute.
import { createInterface } from 'node:readline';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const root = new URL('../..', import.meta.url).pathname;
// The cases are files that do not exist: type information (the type-aware rules) cannot be had for
// them, and the rules under test here read imports and syntax only.
const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });

for await (const line of createInterface({ input: process.stdin })) {
  const { id, file, code } = JSON.parse(line);
  const [result] = await eslint.lintText(code, { filePath: `${root}${file}` });
  const messages = (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
  process.stdout.write(`${JSON.stringify({ id, messages })}\n`);
}
