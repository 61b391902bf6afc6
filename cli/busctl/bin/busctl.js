#!/usr/bin/env node
// The file npm links as `busctl`, checked in with its executable bit. Linking dist/main.js instead
// breaks on a fresh clone: npm install links it before tsc writes it, tsc writes it without the
// executable bit, and `npx busctl` then silently runs systemd's busctl (D-Bus) from PATH.
require('../dist/main.js');
