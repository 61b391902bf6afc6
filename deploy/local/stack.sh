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

# ---------------------------------------------------------------------------------------
# helpers

say()  { echo "stack.sh: $*" >&2; }
die()  { echo "stack.sh: error: $*" >&2; exit 1; }

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# The URLs we hand out when we run the component ourselves.
own_url() {
  case "$1" in
    postgres) echo "postgres://bus:bus@127.0.0.1:$BUS_PG_PORT/bus" ;;
    redis)    echo "redis://127.0.0.1:$BUS_REDIS_PORT" ;;
    kafka)    echo "127.0.0.1:$BUS_KAFKA_PORT" ;;
  esac
}

url_var() {
  case "$1" in
    postgres) echo DATABASE_URL ;;
    redis)    echo REDIS_URL ;;
    kafka)    echo KAFKA_BROKERS ;;
  esac
}

# A component is external when its URL variable is set to something other than our own URL.
is_external() {
  local var; var="$(url_var "$1")"
  [[ -n "${!var:-}" && "${!var}" != "$(own_url "$1")" ]]
}

effective_url() {
  local var; var="$(url_var "$1")"
  if is_external "$1"; then echo "${!var}"; else own_url "$1"; fi
}

env_lines() {
  local c
  for c in "${ALL_COMPONENTS[@]}"; do
    echo "$(url_var "$c")=$(effective_url "$c")"
  done
}

write_env_file() {
  mkdir -p "$LOCAL"
  # Write-then-rename so a concurrent reader never sees a half-written file.
  env_lines >"$LOCAL/stack.env.tmp.$$"
  mv -f "$LOCAL/stack.env.tmp.$$" "$LOCAL/stack.env"
}

# True when something accepts TCP connections on 127.0.0.1:$1 (bash's /dev/tcp: no nc needed).
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# True when pid $1 is alive AND its command line contains $2. Guards against stale pid files
# whose pid has since been reused by an unrelated process.
pid_is() {
  local pid="$1" pattern="$2"
  [[ "$pid" =~ ^[0-9]+$ && -d "/proc/$pid" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
}

# Pid from pid file $1 if that process is alive and matches $2; otherwise returns 1 and,
# unless $3 is "keep" (read-only callers like `status`), removes the stale file.
live_pid_from_file() {
  local file="$1" pattern="$2" mode="${3:-}" pid
  [[ -f "$file" ]] || return 1
  pid="$(head -n1 "$file" 2>/dev/null | tr -d '[:space:]')"
  if pid_is "$pid" "$pattern"; then
    echo "$pid"
    return 0
  fi
  [[ "$mode" == keep ]] && return 1
  say "removing stale pid file $file (pid ${pid:-?} is no longer a running $pattern)"
  rm -f "$file"
  return 1
}

# Send TERM to pid $1, wait up to $2 seconds, then KILL.
stop_pid() {
  local pid="$1" grace="$2" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "pid $pid did not exit within ${grace}s; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# Refuse to start a server on a port someone else already uses: it would fail with a less
# obvious error, or worse, our client checks would talk to the foreign server.
require_free_port() {
  local port="$1" what="$2" var="$3" urlvar="$4"
  if port_open "$port"; then
    die "$what: port 127.0.0.1:$port is already in use by another process (not one started by this script). Free it, pick another port with $var=..., or point $urlvar at an existing server."
  fi
}

APT_UPDATED=0
# Install Debian packages (only ever called when something is missing).
apt_install() {
  local -a sudo=()
  if ! is_root; then
    command -v sudo >/dev/null 2>&1 ||
      die "missing Debian package(s): $*. Install them as root: apt-get install -y $*"
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null 2>&1 ||
    die "missing package(s) $* and apt-get is not available; install them by hand"
  mkdir -p "$LOGS"
  local log="$LOGS/apt.log"
  if [[ "$APT_UPDATED" -eq 0 ]]; then
    say "apt-get update (log: $log)"
    "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update >>"$log" 2>&1 ||
      { tail -n 20 "$log" >&2; die "apt-get update failed (needed to install: $*)"; }
    APT_UPDATED=1
  fi
  say "apt-get install -y $* (log: $log)"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "$@" >>"$log" 2>&1 ||
    { tail -n 20 "$log" >&2; die "apt-get install -y $* failed (log: $log)"; }
}

# ---------------------------------------------------------------------------------------
# PostgreSQL: our own cluster in .local/postgres/data, run as the `postgres` OS user when we
# are root (the server refuses to run as root).

PG_BIN=""

# Choose the binaries: the major version the data dir was created with if one exists (data
# files are not compatible across majors), otherwise the highest installed version.
pg_find_bin() {
  if [[ -f "$PG_DATA/PG_VERSION" ]]; then
    local v; v="$(cat "$PG_DATA/PG_VERSION")"
    if [[ -x "/usr/lib/postgresql/$v/bin/pg_ctl" ]]; then
      PG_BIN="/usr/lib/postgresql/$v/bin"
      return 0
    fi
    if compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
      die "postgres: $PG_DATA was created by PostgreSQL $v, which is not installed. Install postgresql-$v, or delete $PG_DIR (loses the local dev data) to start over with the installed version."
    fi
    # No postgres at all: the caller installs one and we land in the die above if the
    # distribution's version differs.
    return 1
  fi
  local d
  d="$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -n1 || true)"
  [[ -n "$d" && -x "$d/pg_ctl" && -x "$d/initdb" ]] || return 1
  PG_BIN="$d"
}

# Run a command as the database's OS user (from /, since that user may not be allowed to
# enter the caller's working directory; all paths we pass are absolute).
as_pg() {
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

pg_ensure_os_user() {
  is_root || return 0
  id -u postgres >/dev/null 2>&1 && return 0
  say "creating OS user 'postgres'"
  useradd --system --user-group --no-create-home --home-dir /var/lib/postgresql \
    --shell /usr/sbin/nologin postgres
}

# The server runs as `postgres` but lives inside this checkout, so that user must be able to
# traverse every directory above .local/postgres. We do not chmod the user's directories
# behind their back; we say which one blocks.
pg_check_traversal() {
  is_root || return 0
  runuser -u postgres -- test -x "$PG_DIR" -a -r "$PG_DIR" 2>/dev/null && return 0
  # Walk down from / to name the first directory that blocks.
  local d="" part
  local -a parts
  IFS=/ read -r -a parts <<<"${PG_DIR#/}"
  for part in "${parts[@]}"; do
    d="$d/$part"
    if ! runuser -u postgres -- test -x "$d" 2>/dev/null; then
      die "postgres: the 'postgres' OS user cannot enter $d (mode $(stat -c %a "$d")), so it cannot reach $PG_DIR. Allow traversal with: chmod o+x $d  (or run PostgreSQL elsewhere and set DATABASE_URL)"
    fi
  done
  die "postgres: the 'postgres' OS user cannot access $PG_DIR"
}

# Pid of our running postmaster, or return 1. A postmaster.pid whose process is gone (crash,
# kill -9, reboot) is removed here so the next start does not trip over it.
pg_running_pid() {
  local pidfile="$PG_DATA/postmaster.pid" mode="${1:-}" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(head -n1 "$pidfile" 2>/dev/null | tr -d '[:space:]')"
  if pid_is "$pid" "postgres"; then
    echo "$pid"
    return 0
  fi
  [[ "$mode" == keep ]] && return 1
  say "removing stale $pidfile (pid ${pid:-?} is no longer a running postgres)"
  rm -f "$pidfile" "$PG_RUN"/.s.PGSQL.*
  return 1
}

pg_running_port() {
  sed -n 4p "$PG_DATA/postmaster.pid" 2>/dev/null | tr -d '[:space:]'
}

pg_init() {
  say "postgres: initialising a new cluster in $PG_DATA"
  local tmp="$PG_DIR/data.init"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  is_root && chown -R postgres:postgres "$PG_DIR"
  # Trust auth for local socket and 127.0.0.1/::1: this is a throw-away dev/test cluster
  # that only listens on loopback. Init into a temp dir and rename, so an interrupted initdb
  # never leaves a half-made cluster that looks initialised.
  as_pg "$PG_BIN/initdb" -D "$tmp" -U postgres --auth=trust -E UTF8 --no-locale \
    >"$LOGS/postgres-initdb.log" 2>&1 ||
    { tail -n 20 "$LOGS/postgres-initdb.log" >&2; die "postgres: initdb failed (log: $LOGS/postgres-initdb.log)"; }
  # Our settings live in bus.conf, regenerated at each start (ports may change).
  echo "include_if_exists = 'bus.conf'" >>"$tmp/postgresql.conf"
  mv "$tmp" "$PG_DATA"
}

pg_write_conf() {
  local conf="$PG_DATA/bus.conf"
  cat >"$conf" <<EOF
# Generated by deploy/local/stack.sh at every start; edit the script, not this file.
listen_addresses = '127.0.0.1'
port = $BUS_PG_PORT
unix_socket_directories = '$PG_SOCKET_DIR'
max_connections = 200
# Durability is switched off on purpose: this cluster only holds disposable dev/test data,
# and skipping fsync / commit flushes / full-page images makes test suites much faster.
# A crash of the machine can corrupt this cluster; delete .local/postgres to start over.
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  # Per-statement figures for the benches (bench/support.js statementMeter): calls, time, buffers and
  # WAL of each statement, the last two independent of how busy this machine's cores are.
  if [[ -f "$(dirname "$PG_BIN")/lib/pg_stat_statements.so" ]]; then
    echo "shared_preload_libraries = 'pg_stat_statements'" >>"$conf"
  fi
  is_root && chown postgres:postgres "$conf"
  return 0
}

# Create role bus / database bus (idempotent), as the superuser over TCP (trust auth). Warnings only:
# a repeated GRANT's NOTICE ("already a member") on every start reads like a problem and is none.
pg_ensure_db() {
  PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$BUS_PG_PORT" -U postgres -d postgres \
    -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || die "postgres: could not create role/database 'bus'"
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bus') THEN
    CREATE ROLE bus LOGIN CREATEDB PASSWORD 'bus';
  END IF;
END
$$;
-- Tests drop their databases WITH (FORCE), which ends other sessions, autovacuum workers included.
GRANT pg_signal_backend TO bus;
SELECT 'CREATE DATABASE bus OWNER bus'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'bus') \gexec
-- The benches read every database's statement figures (each bench runs on a database of its own).
GRANT pg_read_all_stats TO bus;
SQL
  # pg_stat_statements' view, where the benches read it; absent when the library is not loaded.
  PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$BUS_PG_PORT" -U postgres -d bus \
    -c "DO \$\$ BEGIN IF current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%' THEN CREATE EXTENSION IF NOT EXISTS pg_stat_statements; END IF; END \$\$" \
    >/dev/null || die "postgres: could not create the pg_stat_statements extension in 'bus'"
}

postgres_up() {
  # Fast path: already running.
  if pg_running_pid >/dev/null && pg_find_bin; then
    local running_port; running_port="$(pg_running_port)"
    [[ "$running_port" == "$BUS_PG_PORT" ]] ||
      die "postgres: our cluster is running on port $running_port but BUS_PG_PORT=$BUS_PG_PORT; run 'stack.sh down postgres' first"
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$BUS_PG_PORT" ||
      die "postgres: process is running but not accepting connections on 127.0.0.1:$BUS_PG_PORT (see $LOGS/postgres.log)"
    pg_ensure_db
    echo "reused: postgres"
    return 0
  fi

  if ! pg_find_bin; then
    apt_install postgresql
    pg_find_bin || die "postgres: installed the 'postgresql' package but found no server binaries under /usr/lib/postgresql/*/bin"
  fi
  pg_ensure_os_user
  require_free_port "$BUS_PG_PORT" postgres BUS_PG_PORT DATABASE_URL

  mkdir -p "$PG_DIR" "$PG_RUN" "$LOGS"
  # A unix socket path is limited to ~107 bytes; in a deeply nested checkout fall back to
  # TCP only (everything here connects over 127.0.0.1 anyway).
  PG_SOCKET_DIR="$PG_RUN"
  if (( ${#PG_RUN} + 20 > 107 )); then
    say "postgres: $PG_RUN is too long for a unix socket path; using TCP only"
    PG_SOCKET_DIR=""
  fi
  touch "$LOGS/postgres.log"
  if is_root; then
    chown -R postgres:postgres "$PG_DIR"
    chown postgres:postgres "$LOGS/postgres.log"
    pg_check_traversal
  fi
  [[ -f "$PG_DATA/PG_VERSION" ]] || pg_init
  pg_write_conf

  say "postgres: starting on 127.0.0.1:$BUS_PG_PORT ($PG_BIN)"
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$LOGS/postgres.log" -w -t 60 start \
    >/dev/null 9>&- ||
    { tail -n 30 "$LOGS/postgres.log" >&2; die "postgres: pg_ctl start failed (log: $LOGS/postgres.log)"; }
  local i
  for ((i = 0; i < 300; i++)); do
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$BUS_PG_PORT" && break
    sleep 0.1
  done
  "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$BUS_PG_PORT" ||
    { tail -n 30 "$LOGS/postgres.log" >&2; die "postgres: not ready after 30s"; }
  pg_ensure_db
  echo "started: postgres"
}

postgres_down() {
  if ! pg_running_pid >/dev/null; then
    echo "not running: postgres"
    return 0
  fi
  pg_find_bin || die "postgres: running, but no pg_ctl found to stop it"
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null ||
    die "postgres: pg_ctl stop failed"
  echo "stopped: postgres"
}

postgres_status() {
  local pid
  if pid="$(pg_running_pid keep)"; then
    echo "postgres: running (pid $pid, 127.0.0.1:$(pg_running_port))"
  else
    echo "postgres: stopped"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------
# Redis: a non-persistent redis-server on our port. Installing the Debian package may also
# start the distribution's own service on 6379; that one is irrelevant to us.

redis_ping() {
  [[ "$(redis-cli -h 127.0.0.1 -p "$BUS_REDIS_PORT" ping 2>/dev/null)" == "PONG" ]]
}

redis_up() {
  if live_pid_from_file "$REDIS_PIDFILE" redis-server >/dev/null; then
    redis_ping ||
      die "redis: our redis-server is running but does not answer PING on 127.0.0.1:$BUS_REDIS_PORT (different BUS_REDIS_PORT? run 'stack.sh down redis' first)"
    echo "reused: redis"
    return 0
  fi

  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    apt_install redis-server redis-tools
  fi
  require_free_port "$BUS_REDIS_PORT" redis BUS_REDIS_PORT REDIS_URL

  mkdir -p "$REDIS_DIR" "$LOGS"
  say "redis: starting on 127.0.0.1:$BUS_REDIS_PORT"
  # --save '' / --appendonly no: nothing is persisted; tests expect a fresh store anyway.
  # shellcheck disable=SC2094 # redis opens its --logfile itself; we only add stderr to it
  redis-server --bind 127.0.0.1 --port "$BUS_REDIS_PORT" --dir "$REDIS_DIR" \
    --daemonize yes --pidfile "$REDIS_PIDFILE" --logfile "$LOGS/redis.log" \
    --save '' --appendonly no </dev/null >/dev/null 2>>"$LOGS/redis.log" 9>&- ||
    { tail -n 20 "$LOGS/redis.log" >&2; die "redis: redis-server failed to start (log: $LOGS/redis.log)"; }
  local i
  for ((i = 0; i < 150; i++)); do
    redis_ping && break
    sleep 0.1
  done
  redis_ping || { tail -n 20 "$LOGS/redis.log" >&2; die "redis: no PONG after 15s"; }
  echo "started: redis"
}

redis_down() {
  local pid
  if ! pid="$(live_pid_from_file "$REDIS_PIDFILE" redis-server)"; then
    echo "not running: redis"
    return 0
  fi
  stop_pid "$pid" 15
  rm -f "$REDIS_PIDFILE"
  echo "stopped: redis"
}

redis_status() {
  local pid
  if pid="$(live_pid_from_file "$REDIS_PIDFILE" redis-server keep)"; then
    echo "redis: running (pid $pid, 127.0.0.1:$BUS_REDIS_PORT)"
  else
    echo "redis: stopped"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------
# Kafka: single-node KRaft (combined broker+controller) straight from Apache Kafka's jars.

JAVA="java"
[[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]] && JAVA="$JAVA_HOME/bin/java"

kafka_require_java() {
  command -v "$JAVA" >/dev/null 2>&1 ||
    die "kafka: no 'java' found. Install Java 17+ (apt-get install -y openjdk-17-jre-headless) or set KAFKA_BROKERS to use an existing broker."
  local v major
  v="$("$JAVA" -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')"
  major="${v%%.*}"
  [[ "$major" == "1" ]] && { major="${v#1.}"; major="${major%%.*}"; }
  [[ "$major" =~ ^[0-9]+$ ]] || die "kafka: cannot parse the output of '$JAVA -version' (got '$v')"
  (( major >= 17 )) ||
    die "kafka: Java $v found, Kafka 4 needs Java 17+. Install it (apt-get install -y openjdk-17-jre-headless) or set KAFKA_BROKERS."
}

# Resolve the jars only when missing or when the pom changed (marker = the pom's sha256).
kafka_ensure_jars() {
  local want have=""
  want="$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
  [[ -f "$KAFKA_LIBS/.pom.sha256" ]] && have="$(cat "$KAFKA_LIBS/.pom.sha256")"
  [[ "$want" == "$have" ]] && return 0

  command -v mvn >/dev/null 2>&1 ||
    die "kafka: Maven ('mvn') is needed once to download the Kafka jars. Install it (apt-get install -y maven) or set KAFKA_BROKERS."
  say "kafka: resolving Kafka jars from Maven Central (once; log: $LOGS/maven.log)"
  # Download into a temp dir and swap, so a failed/interrupted download never looks complete.
  local tmp="$KAFKA_LIBS.tmp"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$KAFKA_LIBS")"
  mvn -q -B -f "$KAFKA_POM" dependency:copy-dependencies -DoutputDirectory="$tmp" \
    >"$LOGS/maven.log" 2>&1 ||
    { tail -n 30 "$LOGS/maven.log" >&2; rm -rf "$tmp"; die "kafka: Maven could not resolve the Kafka jars (is Maven Central reachable?). Log: $LOGS/maven.log"; }
  echo "$want" >"$tmp/.pom.sha256"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}

kafka_write_props() {
  cat >"$KAFKA_PROPS" <<EOF
# Generated by deploy/local/stack.sh at every start; edit the script, not this file.
# Single node in KRaft combined mode: this process is both broker and (sole) controller.
process.roles=broker,controller
node.id=1
# Static single-voter quorum (the simplest 4.x setup: no --standalone bootstrap needed).
controller.quorum.voters=1@127.0.0.1:$BUS_KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$BUS_KAFKA_PORT,CONTROLLER://127.0.0.1:$BUS_KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$BUS_KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DATA
num.partitions=3
# One broker: every internal topic must live with a single replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Tests should not wait 3 s for the first consumer-group rebalance.
group.initial.rebalance.delay.ms=0
# The bus creates its topics explicitly; a typo must fail, not create a topic.
auto.create.topics.enable=false
EOF
}

# Run a Kafka class with the resolved jars (quiet logging, on stderr).
kafka_java() {
  "$JAVA" -Xmx256m -Dlog4j2.configurationFile="$DEPLOY/kafka/tools-log4j2.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}

# Format the storage once: only when the data dir has no meta.properties.
kafka_format() {
  [[ -f "$KAFKA_DATA/meta.properties" ]] && return 0
  # An unformatted data dir holds nothing of value (e.g. a format that was interrupted).
  rm -rf "$KAFKA_DATA"
  # A cluster id is 16 random bytes in URL-safe base64 without padding (what
  # `kafka-storage random-uuid` prints) — generated here to save a JVM start. Like Kafka's own
  # Uuid.randomUuid, draw again when it starts with '-': the format tool would read it as an option
  # (1 fresh format in 64 failed that way).
  local cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  done
  say "kafka: formatting $KAFKA_DATA (cluster id $cluster_id)"
  kafka_java kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_PROPS" \
    >"$LOGS/kafka-format.log" 2>&1 ||
    { cat "$LOGS/kafka-format.log" >&2; die "kafka: storage format failed (log: $LOGS/kafka-format.log)"; }
}

# Create + list a topic with the jars' own admin tool: proves the broker serves requests,
# not just that its port is open. Only after a fresh start (each tool run is a JVM start).
kafka_verify() {
  local bs="127.0.0.1:$BUS_KAFKA_PORT"
  kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --create \
    --if-not-exists --topic "$KAFKA_HEALTH_TOPIC" --partitions 1 --replication-factor 1 \
    >/dev/null || die "kafka: broker started but creating topic $KAFKA_HEALTH_TOPIC failed"
  local topics
  if command -v kcat >/dev/null 2>&1; then
    topics="$(kcat -b "$bs" -L -t "$KAFKA_HEALTH_TOPIC" 2>/dev/null | grep -o "\"$KAFKA_HEALTH_TOPIC\"" | tr -d '"' || true)"
  else
    topics="$(kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$bs" --list)"
  fi
  grep -qx "$KAFKA_HEALTH_TOPIC" <<<"$topics" ||
    die "kafka: broker started but topic $KAFKA_HEALTH_TOPIC is not listed"
}

kafka_up() {
  local pid
  if pid="$(live_pid_from_file "$KAFKA_PIDFILE" kafka.Kafka)"; then
    port_open "$BUS_KAFKA_PORT" ||
      die "kafka: our broker (pid $pid) runs but nothing listens on 127.0.0.1:$BUS_KAFKA_PORT (different BUS_KAFKA_PORT, or hung? see $LOGS/kafka.log; 'stack.sh down kafka' stops it)"
    echo "reused: kafka"
    return 0
  fi

  kafka_require_java
  mkdir -p "$KAFKA_DIR" "$LOGS"
  kafka_ensure_jars
  require_free_port "$BUS_KAFKA_PORT" kafka BUS_KAFKA_PORT KAFKA_BROKERS
  require_free_port "$BUS_KAFKA_CONTROLLER_PORT" "kafka controller" BUS_KAFKA_CONTROLLER_PORT KAFKA_BROKERS
  kafka_write_props
  kafka_format

  # Keep the previous run's log for post-mortems; readiness is judged on the fresh one.
  [[ -f "$LOGS/kafka.log" ]] && mv -f "$LOGS/kafka.log" "$LOGS/kafka.log.1"
  say "kafka: starting broker on 127.0.0.1:$BUS_KAFKA_PORT (controller :$BUS_KAFKA_CONTROLLER_PORT)"
  # setsid: own session, so Ctrl-C / the death of the calling `npm test` does not take the
  # broker down with it. The inner shell writes its own pid and then execs java, so the pid
  # file holds the JVM's pid. stdin/stdout/stderr are detached from the caller: a child
  # holding a caller's pipe would make `$(stack.sh up)` or a CI log reader hang.
  # shellcheck disable=SC2016 # $$ and $@ are meant for the inner shell
  (
    cd "$KAFKA_DIR"
    exec setsid bash -c 'echo $$ >"$0"; exec "$@"' "$KAFKA_PIDFILE" \
      "$JAVA" -Xms256m -Xmx512m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
      -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$DEPLOY/kafka/log4j2.properties" \
      -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS"
  ) </dev/null >"$LOGS/kafka.log" 2>&1 9>&- &

  # Ready = the broker logged that it started AND the client port accepts TCP.
  local deadline=$((SECONDS + BUS_KAFKA_START_TIMEOUT)) started=0
  while ((SECONDS < deadline)); do
    pid="$(cat "$KAFKA_PIDFILE" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$LOGS/kafka.log" >&2
      rm -f "$KAFKA_PIDFILE"
      die "kafka: broker exited during startup (log: $LOGS/kafka.log)"
    fi
    if grep -q "Kafka Server started" "$LOGS/kafka.log" 2>/dev/null && port_open "$BUS_KAFKA_PORT"; then
      started=1
      break
    fi
    sleep 0.5
  done
  if ((started == 0)); then
    tail -n 40 "$LOGS/kafka.log" >&2
    [[ -n "${pid:-}" ]] && stop_pid "$pid" 10
    rm -f "$KAFKA_PIDFILE"
    die "kafka: broker not ready after ${BUS_KAFKA_START_TIMEOUT}s, stopped it (log: $LOGS/kafka.log; raise BUS_KAFKA_START_TIMEOUT on slow machines)"
  fi
  kafka_verify
  echo "started: kafka"
}

kafka_down() {
  local pid
  if ! pid="$(live_pid_from_file "$KAFKA_PIDFILE" kafka.Kafka)"; then
    echo "not running: kafka"
    return 0
  fi
  # TERM = controlled shutdown (flushes logs, so the next start needs no recovery).
  stop_pid "$pid" 60
  rm -f "$KAFKA_PIDFILE"
  echo "stopped: kafka"
}

kafka_status() {
  local pid
  if pid="$(live_pid_from_file "$KAFKA_PIDFILE" kafka.Kafka keep)"; then
    echo "kafka: running (pid $pid, 127.0.0.1:$BUS_KAFKA_PORT)"
  else
    echo "kafka: stopped"
    return 1
  fi
}

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
