#!/usr/bin/env bash
# `npm run up`: the whole bus on this machine, in the foreground. Installs what is missing, starts
# Postgres, Redis and Kafka unless they run already, migrates, creates the topics, then runs every
# service in one process: bus routes on BUS_PORT (8080), portal routes on PORTAL_PORT (8090).
# Ctrl-C or SIGTERM stops the services and every server this run started (not those it reused).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

export HOST="${HOST:-127.0.0.1}" BUS_PORT="${BUS_PORT:-8080}" PORTAL_PORT="${PORTAL_PORT:-8090}"
BUS_URL="http://127.0.0.1:${BUS_PORT}"
PORTAL_URL="http://127.0.0.1:${PORTAL_PORT}"
# Tokens carry iss {base}/v1/oauth and aud {base}: the address clients use to reach this bus.
export BUS_BASE_URL="${BUS_BASE_URL:-$BUS_URL}"

if curl -fsS -o /dev/null "$BUS_URL/v1/health" 2>/dev/null; then
  echo "the bus already runs (another npm run up): bus $BUS_URL, portal $PORTAL_URL"
  exit 0
fi

ensure_node_modules
started="$(mktemp)"
ensure_stack "$started"
ensure_local_secrets
build
node services/all-in-one/dist/setup.js
# The demo tenant: credentials printed on first start, kept in .local/demo.env (a restart keeps both).
PORTAL_URL="$PORTAL_URL" BUS_DEMO_ENV_FILE="$ROOT/.local/demo.env" node services/all-in-one/dist/seed.js

node services/all-in-one/dist/main.js &
bus_pid=$!

stop() {
  trap - INT TERM
  echo "stopping the bus" >&2
  kill -TERM "$bus_pid" 2>/dev/null || true
  wait "$bus_pid" 2>/dev/null || true
  # shellcheck disable=SC2046
  if [ -s "$started" ]; then bash deploy/local/stack.sh down $(cat "$started"); fi
  rm -f "$started"
  exit 0
}
trap stop INT TERM

for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "$BUS_URL/v1/health" 2>/dev/null; then break; fi
  if ! kill -0 "$bus_pid" 2>/dev/null; then echo "the bus exited during start-up" >&2; stop; fi
  sleep 0.1
done
cat <<TXT

  message bus is up
    bus     $BUS_URL      (try: curl $BUS_URL/v1/health)
    portal  $PORTAL_URL
    demo    .local/demo.env  (set -a; . .local/demo.env; set +a; then see README.md's quick start)
    admin   .local/operator.env  (set -a; . .local/operator.env; set +a; then busctl --help)
  Ctrl-C stops it.

TXT
wait "$bus_pid" || true
stop
