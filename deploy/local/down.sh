#!/usr/bin/env bash
# `npm run down`: stops what `npm run up` runs. Without arguments: the local identity provider and the
# bus of this checkout (the pids up.sh keeps in .local/), then Postgres, Redis and Kafka. With component names
# (postgres|redis|kafka ...), only those servers, as `deploy/local/stack.sh down` does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
BUS_PIDFILE="$ROOT/.local/bus.pid"
BUS_ENTRY="services/all-in-one/dist/main.js"

# The bus drains for SHUTDOWN_DRAIN_TIMEOUT (10 s by default) and leaves its consumer group before it
# exits; a group still waiting for a killed bus's member (Kafka's 30 s session timeout) makes that
# slower. Past this it is killed.
BUS_STOP_GRACE_SECONDS=60

# True when pid $1 is alive and is the bus (not an unrelated process that got a stale pid's number).
is_bus() {
  [[ "$1" =~ ^[0-9]+$ && -d "/proc/$1" ]] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$BUS_ENTRY"
}

stop_bus() {
  local pid=""
  [ -f "$BUS_PIDFILE" ] && pid="$(head -n1 "$BUS_PIDFILE" | tr -d '[:space:]')"
  if ! is_bus "$pid"; then
    rm -f "$BUS_PIDFILE"
    echo "not running: bus"
    return 0
  fi
  echo "down.sh: stopping the bus (pid $pid)" >&2
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < BUS_STOP_GRACE_SECONDS * 10; i++)); do
    is_bus "$pid" || break
    sleep 0.1
  done
  if is_bus "$pid"; then
    echo "down.sh: the bus (pid $pid) did not exit within ${BUS_STOP_GRACE_SECONDS}s; sending KILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$BUS_PIDFILE"
  echo "stopped: bus"
}

if (($# == 0)); then
  stop_oidc_provider
  stop_bus
fi
exec bash "$ROOT/deploy/local/stack.sh" down "$@"
