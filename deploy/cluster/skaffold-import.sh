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
# An image skaffold does not push is deployed as <name>:<image id> (its exact build), a tag skaffold
# adds after the hooks: that name goes in too.
id="$(podman image inspect --format '{{.Id}}' "$name")"
by_id="${full%:*}:${id#sha256:}"
podman tag "$name" "$full" "$by_id"
podman save --format docker-archive --multi-image-archive "$full" "$by_id" \
  | ctr --address "$CLUSTER_STATE/containerd/containerd.sock" -n k8s.io images import - >/dev/null
cluster_log "skaffold image $full (also $by_id) imported into the cluster's containerd"
