# Redis for deploy/local/stack.sh (sourced): redis_up, redis_down, redis_status.

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

