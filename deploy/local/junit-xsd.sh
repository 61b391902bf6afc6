#!/usr/bin/env bash
# Prints the path of the JUnit XML schema CI systems read reports by: Jenkins' junit-10.xsd (xunit
# plugin, MIT), the copy pytest's source distribution carries to check its own --junitxml output.
# Downloaded once from PyPI (pip, pinned, its SHA-256 checked) into .local/junit-xsd. test/test-runs
# validates the bus's JUnit reports against it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTEST_VERSION=8.3.4
SDIST_SHA256=965370d062bce11e73868e0335abac31b4d3de0e82f4007408d242b4f8610761
OUT="$ROOT/.local/junit-xsd"
XSD="$OUT/junit-10.xsd"

if [ ! -s "$XSD" ]; then
  echo "downloading pytest $PYTEST_VERSION's source distribution (PyPI) for its junit-10.xsd" >&2
  rm -rf "$OUT/download" && mkdir -p "$OUT/download"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$OUT/download" "pytest==$PYTEST_VERSION" >&2
  sdist="$OUT/download/pytest-$PYTEST_VERSION.tar.gz"
  echo "$SDIST_SHA256  $sdist" | sha256sum --check --quiet
  tar -xzf "$sdist" -O "pytest-$PYTEST_VERSION/testing/example_scripts/junit-10.xsd" > "$XSD.new"
  mv "$XSD.new" "$XSD"
  rm -rf "$OUT/download"
fi
echo "$XSD"
