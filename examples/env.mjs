// The examples' configuration: each variable named when it is missing.
export function requiredEnv(program, names) {
  const missing = names.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    process.stderr.write(`${program}: set ${missing.join(', ')} (the README's step 6 shows where each comes from)\n`);
    process.exit(2);
  }
  return Object.fromEntries(names.map((name) => [name, process.env[name]]));
}
