#!/usr/bin/env bash
# `npm run up`: the whole bus on this machine, in the foreground. Installs what is missing, starts
# Postgres, Redis and Kafka unless they run already, migrates, creates the topics, then runs every
# service in one process: bus routes on BUS_PORT (8080), portal routes on PORTAL_PORT (8090), with the
# local identity provider for the portal's sign-in on OIDC_PORT (8093) unless PORTAL_OIDC_ISSUER is set.
# - Ctrl-C or SIGTERM stops the bus and every server this run started (not those it reused).
# - A start that fails stops what it started, and says so.
# - A bus that exits by itself (a crash, or `npm run down`) leaves the servers running, so the next
#   `npm run up` starts in seconds instead of paying Kafka's start again; `npm run down` stops them.
# The bus's pid is in .local/bus.pid while it runs (deploy/local/down.sh stops it), the provider's in
# .local/oidc-provider.pid; the provider stops with the bus.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

export HOST="${HOST:-127.0.0.1}" BUS_PORT="${BUS_PORT:-8080}" PORTAL_PORT="${PORTAL_PORT:-8090}"
BUS_URL="http://127.0.0.1:${BUS_PORT}"
PORTAL_URL="http://127.0.0.1:${PORTAL_PORT}"
# Tokens carry iss {base}/v1/oauth and aud {base}: the address clients use to reach this bus.
export BUS_BASE_URL="${BUS_BASE_URL:-$BUS_URL}"
BUS_PIDFILE="$ROOT/.local/bus.pid"

if curl -fsS -o /dev/null "$BUS_URL/v1/health" 2>/dev/null; then
  echo "the bus already runs (another npm run up): bus $BUS_URL, portal $PORTAL_URL"
  exit 0
fi

started="$(mktemp)"
bus_pid=""

stop_bus() {
  if [ -n "$bus_pid" ]; then
    echo "stopping the bus" >&2
    kill -TERM "$bus_pid" 2>/dev/null || true
    wait "$bus_pid" 2>/dev/null || true
    bus_pid=""
  fi
  rm -f "$BUS_PIDFILE"
  stop_oidc_provider >&2
}

stop_started_servers() {
  if [ -s "$started" ]; then
    echo "stopping the servers this run started: $(tr '\n' ' ' <"$started")" >&2
    # shellcheck disable=SC2046 # one component name per line
    bash deploy/local/stack.sh down $(cat "$started") >&2 || true
  fi
  rm -f "$started"
}

# Until the bus is up, any exit is a failed start: stop what this run started.
failed_start() {
  local rc=$?
  trap - EXIT INT TERM
  echo "npm run up did not start the bus (exit $rc)" >&2
  stop_bus
  stop_started_servers
  exit "$rc"
}
trap failed_start EXIT
trap 'exit 130' INT TERM

ensure_node_modules
ensure_stack "$started"
ensure_local_secrets "$PORTAL_URL"
build
node services/all-in-one/dist/setup.js
# The demo tenant: credentials printed on first start, kept in .local/demo.env (a restart keeps both).
PORTAL_URL="$PORTAL_URL" BUS_DEMO_ENV_FILE="$ROOT/.local/demo.env" node services/all-in-one/dist/seed.js
start_oidc_provider "$PORTAL_URL"

# A process group of its own (job control on for this one start): Ctrl-C in the terminal reaches this
# script, which asks the bus once to drain and stop; a second signal would make it exit at once.
set -m
node services/all-in-one/dist/main.js &
bus_pid=$!
set +m
echo "$bus_pid" >"$BUS_PIDFILE"

healthy=0
for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "$BUS_URL/v1/health" 2>/dev/null; then healthy=1; break; fi
  if ! kill -0 "$bus_pid" 2>/dev/null; then
    bus_pid=""
    echo "the bus exited during start-up (its output is above)" >&2
    exit 1
  fi
  sleep 0.1
done
if [ "$healthy" -ne 1 ]; then
  echo "the bus did not answer $BUS_URL/v1/health within 30 s" >&2
  exit 1
fi

# Up: from here Ctrl-C stops everything this run started, and a bus exiting by itself stops only itself.
trap - EXIT
stop() {
  trap - INT TERM
  stop_bus
  stop_started_servers
  exit 0
}
trap stop INT TERM

sign_in="$PORTAL_URL/portal  (sign-in: $PORTAL_OIDC_ISSUER)"
if [ -n "$OIDC_DEMO_PEOPLE" ]; then
  sign_in="$PORTAL_URL/portal  (sign in as a demo person of the local provider, any password:)
$OIDC_DEMO_PEOPLE"
fi
cat <<TXT

  message bus is up
    bus     $BUS_URL      (try: curl $BUS_URL/v1/health)
    portal  $sign_in
    demo    .local/demo.env  (npm run demo; or set -a; . .local/demo.env; set +a and README.md's quick start)
    admin   .local/operator.env  (set -a; . .local/operator.env; set +a; then npx busctl --help)
  Ctrl-C stops it; npm run down stops it from another terminal.

TXT
bus_status=0
wait "$bus_pid" || bus_status=$?
bus_pid=""
rm -f "$BUS_PIDFILE" "$started"
stop_oidc_provider >&2
if [ "$bus_status" -eq 0 ]; then
  echo "the bus stopped" >&2
else
  echo "the bus exited with code $bus_status (its output is above); Postgres, Redis and Kafka keep running: npm run up starts the bus again on them, npm run down stops them" >&2
fi
exit "$bus_status"
