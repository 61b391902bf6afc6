#!/usr/bin/env bash
# deploy/local/stack.sh — the bus's local infrastructure: PostgreSQL, Redis, Kafka.
#
#   stack.sh up     [postgres|redis|kafka ...]  install what is missing, start what is not
#                                               running, write .local/stack.env (default: all);
#                                               if one fails, stop those this run started
#   stack.sh down   [postgres|redis|kafka ...]  stop what this script started (default: all)
#   stack.sh status [postgres|redis|kafka ...]  one line per component; exit 3 if any is down
#   stack.sh env                                print the dotenv lines (DATABASE_URL, ...)
#   stack.sh kafka-libs                         resolve the Kafka jars (once) and print their
#                                               directory; deploy/cluster builds its Kafka image
#                                               from them
#
# Everything runs as plain processes owned by this checkout (no Docker, no system services)
# and keeps its state under <repo>/.local/ (or BUS_LOCAL_DIR), which is git-ignored:
#   .local/postgres/data     our own cluster (never the Debian system cluster)
#   .local/postgres/run      its unix socket
#   .local/redis/            redis working dir + redis.pid
#   .local/kafka/libs        Kafka jars resolved from Maven Central (deploy/local/kafka/pom.xml);
#                            always under <repo>/.local (or BUS_KAFKA_LIBS), shared by every stack
#   .local/kafka/data        Kafka log dir (KRaft metadata + topics)
#   .local/logs/*.log        server logs
#   .local/stack.env         the URLs for the app/tests, rewritten by every `up`
#   .local/stack.lock        flock: concurrent `up`/`down` runs (npm test + npm run up) queue
#
# Environment:
#   BUS_PG_PORT (55432) BUS_REDIS_PORT (56379) BUS_KAFKA_PORT (59092)
#   BUS_KAFKA_CONTROLLER_PORT (59093)           all servers listen on 127.0.0.1 only; a second
#                                               stack beside this one needs all four changed
#   DATABASE_URL / REDIS_URL / KAFKA_BROKERS    if set, that component is "external": it is
#                                               neither installed nor started, and the value
#                                               is passed through to stack.env. (A value equal
#                                               to the URL we would generate is treated as ours,
#                                               so sourcing stack.env into the environment and
#                                               re-running `up` still manages the local stack.)
#   BUS_KAFKA_START_TIMEOUT (90)                seconds to wait for the broker
#   BUS_LOCAL_DIR (<repo>/.local)               where this stack keeps its state, logs, stack.env
#                                               and lock. A second stack (the fault suite's, which
#                                               stops and restarts its servers) uses a directory
#                                               and ports of its own and never touches the first:
#                                                 BUS_LOCAL_DIR=$PWD/.local/faults BUS_PG_PORT=55532 \
#                                                 BUS_REDIS_PORT=56479 BUS_KAFKA_PORT=59192 \
#                                                 BUS_KAFKA_CONTROLLER_PORT=59193 stack.sh up
#                                               (with DATABASE_URL, REDIS_URL, KAFKA_BROKERS unset)
#   BUS_KAFKA_LIBS (<repo>/.local/kafka/libs)   the resolved Kafka jars
#   BUS_STACK_LOCK_TIMEOUT (1200)               seconds to wait for another stack.sh run
#
# stdout carries only the result lines (started:/reused:/external:, the env lines, status);
# progress and errors go to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DEPLOY="$ROOT/deploy/local"
# Absolute, so the servers (started from other directories) and the pid files agree on it.
LOCAL="$(realpath -m -- "${BUS_LOCAL_DIR:-$ROOT/.local}")"
LOGS="$LOCAL/logs"

BUS_PG_PORT="${BUS_PG_PORT:-55432}"
BUS_REDIS_PORT="${BUS_REDIS_PORT:-56379}"
BUS_KAFKA_PORT="${BUS_KAFKA_PORT:-59092}"
BUS_KAFKA_CONTROLLER_PORT="${BUS_KAFKA_CONTROLLER_PORT:-59093}"
BUS_KAFKA_START_TIMEOUT="${BUS_KAFKA_START_TIMEOUT:-90}"
BUS_STACK_LOCK_TIMEOUT="${BUS_STACK_LOCK_TIMEOUT:-1200}"

ALL_COMPONENTS=(postgres redis kafka)

PG_DIR="$LOCAL/postgres"
PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run"
REDIS_DIR="$LOCAL/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
KAFKA_DIR="$LOCAL/kafka"
# The jars are the checkout's, not one stack's: a second stack reuses them instead of resolving again.
KAFKA_LIBS="$(realpath -m -- "${BUS_KAFKA_LIBS:-$ROOT/.local/kafka/libs}")"
KAFKA_DATA="$KAFKA_DIR/data"
KAFKA_PROPS="$KAFKA_DIR/server.properties"
KAFKA_PIDFILE="$KAFKA_DIR/kafka.pid"
KAFKA_POM="$DEPLOY/kafka/pom.xml"
KAFKA_HEALTH_TOPIC="bus-stack-healthcheck"

# The lock is held on fd 9. Every daemon we launch gets `9>&-`: a server that inherited the
# fd would hold the lock for its whole life and every later stack.sh would wait forever.
LOCK_FD=9

# One file per component; each defines <component>_up, _down and _status for the commands below.
. "$DEPLOY/stack/common.sh"
. "$DEPLOY/stack/postgres.sh"
. "$DEPLOY/stack/redis.sh"
. "$DEPLOY/stack/kafka.sh"

# ---------------------------------------------------------------------------------------
# commands

usage() {
  cat >&2 <<'EOF'
usage: deploy/local/stack.sh up     [postgres|redis|kafka ...]
       deploy/local/stack.sh down   [postgres|redis|kafka ...]
       deploy/local/stack.sh status [postgres|redis|kafka ...]
       deploy/local/stack.sh env
       deploy/local/stack.sh kafka-libs
EOF
  exit 2
}

COMPONENTS=()
parse_components() {
  COMPONENTS=()
  local c
  if (($# == 0)); then
    COMPONENTS=("${ALL_COMPONENTS[@]}")
    return 0
  fi
  for c in "$@"; do
    case "$c" in
      postgres | redis | kafka) COMPONENTS+=("$c") ;;
      *) echo "stack.sh: unknown component '$c' (expected: ${ALL_COMPONENTS[*]})" >&2; usage ;;
    esac
  done
}

validate_ports() {
  local v
  for v in BUS_PG_PORT BUS_REDIS_PORT BUS_KAFKA_PORT BUS_KAFKA_CONTROLLER_PORT BUS_KAFKA_START_TIMEOUT BUS_STACK_LOCK_TIMEOUT; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a number (got '${!v}')"
  done
}

# Serialise `up`/`down`: two concurrent runs must not both initdb or start a server.
take_lock() {
  mkdir -p "$LOCAL"
  eval "exec $LOCK_FD>\"\$LOCAL/stack.lock\""
  if ! flock -n "$LOCK_FD"; then
    say "another stack.sh is running; waiting for it (up to ${BUS_STACK_LOCK_TIMEOUT}s)"
    flock -w "$BUS_STACK_LOCK_TIMEOUT" "$LOCK_FD" ||
      die "timed out waiting for $LOCAL/stack.lock"
  fi
}

# The components this `up` found stopped and set out to start. When a later one fails, the EXIT trap
# stops these again (the one that failed too, if it got as far as running): a failed `up` leaves
# nothing of its own running, and says so.
STARTING=()
stop_started_on_failure() {
  local rc=$? c
  trap - EXIT
  if ((rc != 0 && ${#STARTING[@]} > 0)); then
    say "up failed; stopping what this run started: ${STARTING[*]}"
    for c in "${STARTING[@]}"; do
      ("${c}_down") >&2 || say "$c: could not stop it (see above)"
    done
  fi
  exit "$rc"
}

cmd_up() {
  parse_components "$@"
  take_lock
  mkdir -p "$LOGS"
  trap stop_started_on_failure EXIT
  local c
  for c in "${COMPONENTS[@]}"; do
    if is_external "$c"; then
      echo "external: $c"
    else
      "${c}_status" >/dev/null 2>&1 || STARTING+=("$c")
      "${c}_up"
    fi
  done
  trap - EXIT
  write_env_file
  cat "$LOCAL/stack.env"
}

cmd_down() {
  parse_components "$@"
  take_lock
  local c
  for c in "${COMPONENTS[@]}"; do
    if is_external "$c"; then
      echo "external: $c"
    else
      "${c}_down"
    fi
  done
}

cmd_status() {
  parse_components "$@"
  local c rc=0 var
  for c in "${COMPONENTS[@]}"; do
    if is_external "$c"; then
      var="$(url_var "$c")"
      echo "$c: external ($var=${!var})"
    else
      "${c}_status" || rc=3
    fi
  done
  return "$rc"
}

main() {
  (($# >= 1)) || usage
  validate_ports
  local cmd="$1"
  shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    env) (($# == 0)) || usage; env_lines ;;
    kafka-libs) (($# == 0)) || usage; mkdir -p "$LOGS"; kafka_ensure_jars; echo "$KAFKA_LIBS" ;;
    -h | --help | help) usage ;;
    *) echo "stack.sh: unknown command '$cmd'" >&2; usage ;;
  esac
}

main "$@"
