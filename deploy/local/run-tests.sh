#!/usr/bin/env bash
# `npm test`: install what is missing, start the servers the tests use (real Postgres, Redis, Kafka),
# type-check and build, create the bus topics (the set-up `npm run up` runs too), lint, then run the
# unit, integration and end-to-end tiers with jest.
# Extra arguments go to jest, e.g. `npm test -- --selectProjects unit`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

ensure_node_modules
ensure_stack
ensure_chart_tools
build
# The bus topics exist before any test publishes: a fresh broker has none, and the bus never
# auto-creates topics. (It also migrates the shared `bus` database; each test uses its own.)
node services/all-in-one/dist/setup.js
echo "linting (eslint)" >&2
eslint .
exec jest "$@"
