// Integration and end-to-end tests talk to the servers deploy/local/stack.sh started; it writes their
// addresses to .local/stack.env. Variables already set (e.g. DATABASE_URL of an existing server) win.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', '..', '.local', 'stack.env');
if (fs.existsSync(file)) {
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && process.env[m[1]] === undefined) process.env[m[1]] = m[2];
  }
}
for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS']) {
  if (!process.env[name]) {
    throw new Error(`${name} is not set and .local/stack.env does not name it: run the tests with \`npm test\`, which starts the servers`);
  }
}
