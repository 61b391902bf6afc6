#!/usr/bin/env bash
# Installs schemathesis (PyPI) into a project-local venv for the API fuzzing tier (test/fuzz,
# `npm run test:fuzz`) and prints the path of its `st` command. Reused while it holds the pinned
# version; a different pin or a broken venv is rebuilt. Needs python3 (3.9+) with venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Pinned: a new schemathesis brings new checks and generators, which is a change to review, not drift.
SCHEMATHESIS_VERSION="4.32.5"
VENV="$ROOT/.local/schemathesis/$SCHEMATHESIS_VERSION"
ST="$VENV/bin/st"

installed_version() {
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null || true
}

if [ ! -x "$ST" ] || [ "$(installed_version)" != "$SCHEMATHESIS_VERSION" ]; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi
echo "$ST"
