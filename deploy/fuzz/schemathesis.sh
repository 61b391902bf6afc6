#!/usr/bin/env bash
# Installs schemathesis (PyPI) into a project-local venv for the API fuzzing tier (test/fuzz,
# `npm run test:fuzz`) and prints the path of its `st` command.
set -euo pipefail
# Pinned: a new schemathesis brings new checks and generators, which is a change to review, not drift.
SCHEMATHESIS_VERSION="4.32.5"
echo "$(bash "$(dirname "${BASH_SOURCE[0]}")/../local/pip-venv.sh" schemathesis "$SCHEMATHESIS_VERSION")/bin/st"
