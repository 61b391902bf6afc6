# Shared by up.sh and run-tests.sh: make the checkout runnable from nothing, every time.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# node_modules is (re)installed when missing or older than package-lock.json, on the machine's own
# Node; everything after it runs on the Node 24 the `node` devDependency pins. `npm install
# --no-save` rather than `npm ci`: the registries of these machines carry only this platform's
# optional binaries (@swc/core-<os>-<cpu>, ...), so the lockfile cannot list the others and `npm ci`
# refuses it as out of sync; `npm install` follows the lockfile for everything it does list.
ensure_node_modules() {
  local marker="$ROOT/node_modules/.package-lock.json"
  if [ ! -f "$marker" ] || [ "$ROOT/package-lock.json" -nt "$marker" ]; then
    echo "installing npm dependencies (npm install)" >&2
    (cd "$ROOT" && npm install --no-save --no-audit --no-fund --loglevel=error)
  fi
  export PATH="$ROOT/node_modules/.bin:$PATH"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  if [ "$major" -lt 24 ]; then
    echo "error: node $(node -v) is on PATH after npm ci; expected the pinned Node 24 in node_modules/.bin" >&2
    exit 1
  fi
}

# How the scripts here start a compiled entry point of the bus, as every other start of it does (npm
# start scripts, the image's entrypoint, libs/testing): kafkajs 2.2.4 sets a negative timer that Node 24
# warns about at every start (TimeoutNegativeWarning, kafkajs issue 1751, fixed upstream but
# unreleased). Harmless, so that one warning type is off; every other warning still prints.
BUS_NODE=(node --disable-warning=TimeoutNegativeWarning)

# Starts (or reuses) Postgres, Redis and Kafka and exports their addresses; prints the started ones
# into the file named by $1 so the caller can stop exactly those.
ensure_stack() {
  local started_file="${1:-/dev/null}" result
  # stack.sh's result lines (started:/reused:/external:, the URLs) join its progress on stderr. Taken
  # whole rather than through `tee /dev/stderr`, which opens stderr anew: when stderr is a log file
  # (`npm run up > log 2>&1`) that truncates it and leaves NUL bytes where the earlier lines were.
  result="$(bash "$ROOT/deploy/local/stack.sh" up)"
  printf '%s\n' "$result" >&2
  sed -n 's/^started: //p' <<<"$result" > "$started_file"
  set -a
  # shellcheck disable=SC1091
  . "$ROOT/.local/stack.env"
  set +a
  # One local broker: every topic has one replica; a few partitions keep the local broker light.
  export KAFKA_REPLICATION_FACTOR="${KAFKA_REPLICATION_FACTOR:-1}"
  export KAFKA_MESSAGES_PARTITIONS="${KAFKA_MESSAGES_PARTITIONS:-3}"
}

# Secrets of the local bus that must survive restarts, kept in .local/ (git-ignored); $1 is the URL of
# the portal they are for. The key that seals the token service's signing keys
# (SIGNING_KEY_ENCRYPTION_KEY, base64 of 32 bytes): a new one on every start would leave the stored
# signing keys unreadable.
ensure_local_secrets() {
  local file="$ROOT/.local/signing-key-encryption.key"
  if [ ! -s "$file" ]; then
    mkdir -p "$ROOT/.local"
    (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))' > "$file")
  fi
  export SIGNING_KEY_ENCRYPTION_KEY="${SIGNING_KEY_ENCRYPTION_KEY:-$(cat "$file")}"
  # The pull API's receipt-handle HMAC key (RECEIPT_HANDLE_KEY): kept, so a restart does not void the
  # handles of messages consumers are processing.
  local receipt="$ROOT/.local/receipt-handle.key"
  if [ ! -s "$receipt" ]; then
    (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))' > "$receipt")
  fi
  export RECEIPT_HANDLE_KEY="${RECEIPT_HANDLE_KEY:-$(cat "$receipt")}"
  # The operator's admin API credentials as busctl's variables (.local/operator.env: `set -a; .
  # .local/operator.env; set +a` and busctl works against this bus). The credentials are made once;
  # BUSCTL_URL is rewritten at every start, so busctl talks to this stack's portal ($1), whatever
  # PORTAL_PORT it has, and never to another stack's on the default port.
  local portal_url="$1" operator="$ROOT/.local/operator.env" id="" secret=""
  if [ -s "$operator" ]; then
    id="$(sed -n 's/^BUSCTL_CLIENT_ID=//p' "$operator")"
    secret="$(sed -n 's/^BUSCTL_CLIENT_SECRET=//p' "$operator")"
  fi
  id="${id:-operator}"
  secret="${secret:-$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')}"
  (umask 077 && printf '# The operator of `npm run up` (deploy/local/lib.sh), for busctl. Secret: keep this file private.\nBUSCTL_URL=%s\nBUSCTL_CLIENT_ID=%s\nBUSCTL_CLIENT_SECRET=%s\n' \
    "$portal_url" "$id" "$secret" > "$operator.tmp")
  mv -f "$operator.tmp" "$operator"
  export OPERATOR_CLIENT_ID="${OPERATOR_CLIENT_ID:-$id}"
  export OPERATOR_CLIENT_SECRET="${OPERATOR_CLIENT_SECRET:-$secret}"
}

# The browser tier's chromium (test/browser, CHROMIUM_PATH): Debian's package, since Playwright's own
# browser download cannot run on these machines. Installed when missing; apt needs root, as CI is.
ensure_browser() {
  if [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then return 0; fi
  echo "installing chromium (apt-get) for the browser tier" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
}

build() {
  echo "building (tsc -b)" >&2
  (cd "$ROOT" && tsc -b)
}

# Tools of the chart check (deploy/helm/check.sh, test/chart.test.ts): Helm 3, the Kubernetes JSON
# schemas and hadolint. `ensure_chart_tools` installs them into .local/ when missing (Helm by
# `go install`, ~3 min the first time).
# shellcheck source=deploy/helm/tools.sh
. "$ROOT/deploy/helm/tools.sh"
