import { readdir, readFile, writeFile } from 'node:fs/promises';
import { run } from './run';

run(process.argv.slice(2), process.env, {
  fetch,
  readFile: (path) => readFile(path),
  readDir: (path) =>
    readdir(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOTDIR' || err.code === 'ENOENT') return undefined;
      throw err;
    }),
  writeFile: (path, text) => writeFile(path, text, 'utf8'),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => new Date(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A bug, not a refusal: the stack says where. No request detail is printed, so no secret either.
    process.stderr.write(`busctl: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
