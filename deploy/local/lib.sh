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

# jest as the test scripts run it.
JEST=(node "$ROOT/node_modules/jest/bin/jest.js")

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

# The portal's sign-in for people on `npm run up` (docs/portal.md): unless PORTAL_OIDC_ISSUER names a
# provider already, the local one (deploy/local/oidc-provider.mjs, demo people, any password) starts on
# 127.0.0.1:$OIDC_PORT (8093) with a client secret new at every start, and the PORTAL_OIDC_* variables
# the bus reads are exported to match. $1 is the portal's URL. Its pid is in .local/oidc-provider.pid
# (stop_oidc_provider, down.sh), its output in .local/logs/oidc-provider.log; the demo people it
# prints are kept in OIDC_DEMO_PEOPLE for the start-up banner.
OIDC_PROVIDER_ENTRY="deploy/local/oidc-provider.mjs"
OIDC_PROVIDER_PIDFILE="$ROOT/.local/oidc-provider.pid"
OIDC_DEMO_PEOPLE=""
start_oidc_provider() {
  local portal_url="$1"
  if [ -n "${PORTAL_OIDC_ISSUER:-}" ]; then
    echo "portal sign-in: the identity provider at $PORTAL_OIDC_ISSUER (PORTAL_OIDC_ISSUER)" >&2
    return 0
  fi
  stop_oidc_provider
  local port="${OIDC_PORT:-8093}" log="$ROOT/.local/logs/oidc-provider.log" pid i
  export PORTAL_OIDC_ISSUER="http://127.0.0.1:$port" PORTAL_OIDC_CLIENT_ID="bus-portal"
  PORTAL_OIDC_CLIENT_SECRET="$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')"
  export PORTAL_OIDC_CLIENT_SECRET PORTAL_OIDC_REDIRECT_URL="$portal_url/portal/callback"
  mkdir -p "$ROOT/.local/logs"
  echo "starting the local identity provider on 127.0.0.1:$port (log: .local/logs/oidc-provider.log)" >&2
  # A process group of its own, as the bus's: Ctrl-C reaches up.sh, which stops it.
  set -m
  OIDC_PORT="$port" OIDC_CLIENT_ID="$PORTAL_OIDC_CLIENT_ID" OIDC_CLIENT_SECRET="$PORTAL_OIDC_CLIENT_SECRET" \
    OIDC_REDIRECT_URL="$PORTAL_OIDC_REDIRECT_URL" node "$ROOT/$OIDC_PROVIDER_ENTRY" >"$log" 2>&1 &
  pid=$!
  set +m
  echo "$pid" >"$OIDC_PROVIDER_PIDFILE"
  for ((i = 0; i < 150; i++)); do
    if grep -q '^oidc provider ready ' "$log"; then
      # shellcheck disable=SC2034 # up.sh's banner prints it
      OIDC_DEMO_PEOPLE="$(sed -n '/^demo people/,/^oidc provider ready/{/^  /s/^/      /p}' "$log")"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the local identity provider exited during start-up (is 127.0.0.1:$port taken? OIDC_PORT sets another):" >&2
      cat "$log" >&2
      rm -f "$OIDC_PROVIDER_PIDFILE"
      return 1
    fi
    sleep 0.1
  done
  echo "the local identity provider did not start within 15 s; its output:" >&2
  cat "$log" >&2
  return 1
}

# Stops the local identity provider this checkout started, if it runs (a pid file naming another
# process, left by a crash, is only removed). Prints `stopped: oidc provider` when it stopped one.
stop_oidc_provider() {
  local pid="" i
  [ -f "$OIDC_PROVIDER_PIDFILE" ] && pid="$(head -n1 "$OIDC_PROVIDER_PIDFILE" | tr -d '[:space:]')"
  if is_oidc_provider "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      is_oidc_provider "$pid" || break
      sleep 0.1
    done
    if is_oidc_provider "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "stopped: oidc provider"
  fi
  rm -f "$OIDC_PROVIDER_PIDFILE"
}

# True when pid $1 is alive and is the local provider (an exited child's zombie has no command line).
is_oidc_provider() {
  [[ "$1" =~ ^[0-9]+$ && -d "/proc/$1" ]] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$OIDC_PROVIDER_ENTRY"
}

# The browser tier's chromium (test/browser, CHROMIUM_PATH): Debian's package, since Playwright's own
# browser download cannot run on these machines. Installed when missing; apt needs root, as CI is.
ensure_browser() {
  if [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then return 0; fi
  echo "installing chromium (apt-get) for the browser tier" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
}

# The e2e tier's Prometheus and promtool (test/prometheus.test.ts): Debian's package, installed when
# missing (cached by the machine like chromium); the test checks the shipped alert rules and dashboard
# queries with them. PROMETHEUS_BIN and PROMTOOL_BIN point elsewhere.
ensure_prometheus() {
  if [ -x "${PROMETHEUS_BIN:-/usr/bin/prometheus}" ] && [ -x "${PROMTOOL_BIN:-/usr/bin/promtool}" ]; then return 0; fi
  echo "installing prometheus and promtool (apt-get) for the e2e tier" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2
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
