#!/usr/bin/env bash
# `skaffold run` (or any skaffold command) of the dev set-up against the cluster tier's cluster, as a
# platform team runs `skaffold dev` on theirs: profiles dev (the dependencies release, then the bus),
# local-images (no registry here) and podman-containerd (podman's Docker API builds, each image is
# imported into the node's containerd). Builds skaffold once (tools.sh skaffold) and runs podman's
# Docker API service for the duration. docs/deploy.md, "skaffold on the tier's cluster", says what was checked.
#   CLUSTER_KEEP=1 npm run test:cluster    # or deploy/cluster/up.sh: a running cluster
#   deploy/cluster/skaffold.sh             # skaffold run -p dev,local-images,podman-containerd
#   deploy/cluster/skaffold.sh dev         # skaffold dev … (Ctrl-C ends it)
#   deploy/cluster/down.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/images.sh
. "$here/images.sh"
# shellcheck source=deploy/helm/tools.sh
. "$here/../helm/tools.sh"

if [ ! -S "$CLUSTER_STATE/containerd/containerd.sock" ] || ! kc get --raw /readyz >/dev/null 2>&1; then
  echo "error: no running cluster: start one with deploy/cluster/up.sh (or CLUSTER_KEEP=1 npm run test:cluster)" >&2
  exit 1
fi
bash "$here/tools.sh" skaffold
ensure_helm
podman_configure

socket="$CLUSTER_STATE/podman.sock"
podman system service --time=0 "unix://$socket" >"$CLUSTER_LOGS/podman-service.log" 2>&1 &
service_pid=$!
trap 'kill "$service_pid" 2>/dev/null; wait "$service_pid" 2>/dev/null; rm -f "$socket"' EXIT
cluster_wait_for "podman's Docker API" test -S "$socket"

command="${1:-run}"
[ $# -gt 0 ] && shift
cd "$CLUSTER_ROOT"
DOCKER_HOST="unix://$socket" PATH="$(dirname "$HELM_BIN"):$CLUSTER_BIN:$PATH" SKAFFOLD_UPDATE_CHECK=false \
  "$CLUSTER_BIN/skaffold" "$command" --profile dev,local-images,podman-containerd "$@"
