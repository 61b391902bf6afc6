#!/usr/bin/env bash
# Replays the Dockerfile's RUN steps without a Docker daemon (none exists on the project's machines):
# copies the build context (.dockerignore's rules, approximately) to a temporary directory, then runs
# the build stage (npm install, tsc -b services/*/, assemble-runtime.sh) and the prod-deps stage
# (npm install --omit=dev) there with this checkout's Node 24. Prints the runtime directory, which is
# what the image carries under /app: run a service from it, e.g.
#   cd <dir> && PORT=18091 REDIS_URL=redis://127.0.0.1:56379 node services/catalogue/dist/main.js
# Keep the commands in step with the Dockerfile (test/chart.test.ts compares them). Needs the npm
# registry; takes about a minute.
#   deploy/image/replay-build.sh [DIR]
set -euo pipefail
# shellcheck source=deploy/local/lib.sh
. "$(dirname "$0")/../local/lib.sh"
ensure_node_modules >/dev/null
work="${1:-$(mktemp -d)}"
mkdir -p "$work/src" "$work/runtime"
cd "$ROOT"
tar cf - --exclude=node_modules --exclude=dist --exclude='*.tsbuildinfo' --exclude=coverage --exclude=.git \
  --exclude=./.local --exclude=./.ci --exclude=./bench --exclude=./charts --exclude=./deploy/local \
  --exclude=./deploy/helm --exclude=./deploy/observability --exclude=./docs --exclude=./test \
  --exclude=./Dockerfile --exclude=./skaffold.yaml . | (cd "$work/src" && tar xf -)

# build stage
cd "$work/src"
npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error
node node_modules/typescript/bin/tsc -b services/*/
sh deploy/image/assemble-runtime.sh "$work/src" "$work/runtime"

# prod-deps stage
cd "$work/runtime"
npm install --omit=dev --no-save --ignore-scripts --no-audit --no-fund --loglevel=error
rm -f .npmrc
echo "$work/runtime"
