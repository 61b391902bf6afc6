#!/usr/bin/env bash
# Builds the small OpenTelemetry Collector of deploy/local/otelcol (OTLP receiver, file exporter) into
# .local/otelcol/bin and prints the binary's path. The stamp is a hash of its Go sources, go.mod and
# go.sum: a second run with the same sources builds nothing. Cold: ~3 min of CPU, 122 MB of module zips
# (docs/observability.md, "A real Collector"). Exits 77 naming why when there is no Go toolchain;
# `--check` only answers that question, building nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=deploy/local/otelcol
out=.local/otelcol
bin="$out/bin/bus-otelcol"
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go > /dev/null; then
  echo "otelcol.sh: no Go toolchain (go not on PATH nor in /usr/local/go/bin)" >&2
  exit 77
fi
[ "${1:-}" != --check ] || exit 0
mkdir -p "$out/bin"
# One build at a time: CI starts one beside npm test, and the trace test runs this too.
exec 9> "$out/build.lock"
flock 9
stamp="$(cat "$src"/*.go "$src/go.mod" "$src/go.sum" | sha256sum | cut -d' ' -f1) $(go env GOVERSION)"
if [ ! -x "$bin" ] || [ "$(cat "$bin.stamp" 2> /dev/null)" != "$stamp" ]; then
  (
    cd "$src"
    GOCACHE="$PWD/../../../$out/gocache" GOMODCACHE="$PWD/../../../$out/gomodcache" GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
      go build -trimpath -ldflags='-s -w' -o "$PWD/../../../$bin.new" .
  )
  mv "$bin.new" "$bin"
  echo "$stamp" > "$bin.stamp"
  # The caches (~1 GB) serve only a rebuild, which downloads again.
  GOCACHE="$PWD/$out/gocache" GOMODCACHE="$PWD/$out/gomodcache" go clean -cache -modcache
fi
echo "$PWD/$bin"
