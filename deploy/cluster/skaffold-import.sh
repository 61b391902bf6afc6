#!/usr/bin/env bash
# skaffold before-deploy hook of the profile podman-containerd (skaffold.yaml): every tag podman holds of
# the image skaffold builds goes into the cluster's containerd. skaffold builds through podman's Docker
# API, which stores its short names (message-bus:<tag>) as docker.io/library/message-bus:<tag>, the
# very names containerd resolves the pods' short names to.
# Before the deploy rather than after the build: an image skaffold does not push is deployed as
# message-bus:<image id>, a tag it adds after its build hooks, and on a cache hit it builds (and hooks)
# nothing at all — both names are in podman by the time it deploys.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"
repository="docker.io/library/message-bus"
mapfile -t names < <(podman images --noheading --format '{{.Repository}}:{{.Tag}}' --filter "reference=$repository" | grep -v '<none>' | sort -u)
[ ${#names[@]} -gt 0 ] || { echo "error: podman holds no $repository image: did skaffold build it?" >&2; exit 1; }
podman save --format docker-archive --multi-image-archive "${names[@]}" \
  | ctr --address "$CLUSTER_STATE/containerd/containerd.sock" -n k8s.io images import - >/dev/null
cluster_log "skaffold: ${names[*]##*:} of $repository imported into the cluster's containerd"
