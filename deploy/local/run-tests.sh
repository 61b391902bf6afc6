#!/usr/bin/env bash
# `npm test`: install what is missing, start the servers the tests use (real Postgres, Redis, Kafka),
# type-check and build, lint, then run the unit, integration and end-to-end tiers with jest.
# Extra arguments go to jest, e.g. `npm test -- --selectProjects unit`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

ensure_node_modules
ensure_stack
build
echo "linting (eslint)" >&2
eslint .
exec jest "$@"
