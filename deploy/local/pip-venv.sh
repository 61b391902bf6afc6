#!/usr/bin/env bash
# Usage: pip-venv.sh <package> <version>
# Installs one pinned PyPI package into a project-local venv (.local/venvs/<package>-<version>) and
# prints the venv's path. Reused while it holds that version; a broken venv is rebuilt. The tools the
# tests drive from Python (schemathesis, boto3) come through here. Needs python3 (3.9+) with venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PACKAGE="${1:?package name}"
VERSION="${2:?package version}"
VENV="$ROOT/.local/venvs/$PACKAGE-$VERSION"

installed_version() {
  "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$PACKAGE'))" 2>/dev/null || true
}

if [ "$(installed_version)" != "$VERSION" ]; then
  echo "installing $PACKAGE $VERSION into $VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PACKAGE==$VERSION" >&2
fi
echo "$VENV"
