#!/usr/bin/env bash
# skaffold build hook of the profile podman-containerd (skaffold.yaml): the image skaffold just built
# with podman goes into the cluster's containerd, under the name the pods ask for (a short name such as
# message-bus:<tag> is docker.io/library/message-bus:<tag> to containerd, localhost/… to podman).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"
name="${SKAFFOLD_IMAGE:?skaffold sets SKAFFOLD_IMAGE for build hooks}"
case "${name%%/*}" in
  *.*|*:*|localhost) full="$name" ;;
  *) full="docker.io/library/$name" ;;
esac
podman tag "$name" "$full"
podman save --format docker-archive "$full" \
  | ctr --address "$CLUSTER_STATE/containerd/containerd.sock" -n k8s.io images import - >/dev/null
cluster_log "skaffold image $full imported into the cluster's containerd"
