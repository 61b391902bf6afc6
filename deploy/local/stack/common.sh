# Shared helpers of deploy/local/stack.sh (sourced): messages, URLs and the env file, pid files, ports, apt.

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

