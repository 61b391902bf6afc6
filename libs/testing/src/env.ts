/** A variable the test run must have; test/support/load-stack-env.js fills these from .local/stack.env. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`npm test\`, which starts the servers`);
  return value;
}
