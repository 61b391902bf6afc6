#!/usr/bin/env bash
# `npm test`: install what is missing, start the servers the tests use (real Postgres, Redis, Kafka),
# type-check and build, create the bus topics (the set-up `npm run up` runs too), lint, then run the
# test tiers with jest one after another — unit, integration, e2e, faults, fuzz, browser — printing each
# step's time, so a slow tier shows before CI's time limit does.
# Extra arguments go to jest, e.g. `npm test -- --selectProjects unit` (then only that jest run).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

TIERS=(unit integration e2e faults fuzz browser)
timings=()
timed() {
  local what="$1" started=$SECONDS rc=0
  shift
  "$@" || rc=$?
  timings+=("$what $((SECONDS - started)) s")
  echo "time: $what $((SECONDS - started)) s" >&2
  return "$rc"
}

timed install ensure_node_modules
timed servers ensure_stack
timed chart-tools ensure_chart_tools
timed browser-tools ensure_browser
timed prometheus-tools ensure_prometheus
timed build build
# The bus topics exist before any test publishes: a fresh broker has none, and the bus never
# auto-creates topics. (It also migrates the shared `bus` database; each test uses its own.)
timed setup node services/all-in-one/dist/setup.js
echo "linting (eslint)" >&2
timed lint eslint .
echo "checking the formatting (prettier; \`npm run format\` fixes it)" >&2
timed format npm run -s format:check

# A caller choosing its projects gets exactly that jest run.
for arg in "$@"; do
  if [[ "$arg" == --selectProjects* ]]; then exec "${JEST[@]}" "$@"; fi
done

# One jest run per tier. --outputFile (.ci/run's) is split per tier and merged back at the end.
output=""
args=()
for arg in "$@"; do
  case "$arg" in
    --outputFile=*) output="${arg#--outputFile=}" ;;
    *) args+=("$arg") ;;
  esac
done
status=0
tier_timeout_min="${BUS_TIER_TIMEOUT_MIN:-20}"
[[ "$tier_timeout_min" =~ ^[1-9][0-9]*$ ]] || { echo "BUS_TIER_TIMEOUT_MIN must be a whole number of minutes, got '$tier_timeout_min'" >&2; exit 2; }
tier_files=()
mkdir -p "$ROOT/.local/ci"
for tier in "${TIERS[@]}"; do
  file="$ROOT/.local/ci/jest-$tier.json"
  rm -f "$file"
  tier_files+=("$file")
  echo "tier: $tier" >&2
  # A tier that hangs (a test leaving a handle open keeps an in-band jest alive after its last test)
  # is stopped and fails, so the tiers after it still run and CI's time limit is never the one to act.
  rc=0
  timed "tier $tier" timeout --kill-after=30 "${tier_timeout_min}m" "${JEST[@]}" --selectProjects "$tier" --passWithNoTests ${args[@]+"${args[@]}"} ${output:+"--outputFile=$file"} || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "tier $tier STOPPED: it did not finish within ${tier_timeout_min} min (BUS_TIER_TIMEOUT_MIN); see its last test above" >&2
  fi
  [ "$rc" -eq 0 ] || status=1
done
[ -z "$output" ] || node deploy/local/merge-jest-results.js "$output" "${tier_files[@]}"
times="times: $(IFS=','; echo "${timings[*]}" | sed 's/,/, /g')"
echo "$times" >&2
# .ci/run prints it again beside its last line, where a CI log's tail shows it.
echo "$times" > "$ROOT/.local/ci/times.txt"
exit "$status"
