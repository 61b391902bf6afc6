#!/usr/bin/env bash
# Container images of the cluster tier, built with podman (no Docker engine, no registry needed):
#   localhost/debian:bookworm        debootstrap of the Debian mirror apt already uses
#   node:<NODE_VERSION>-bookworm-slim  a stand-in for the Dockerfile's FROM (images/node/Containerfile)
#   localhost/message-bus:<inputs>   the project's own Dockerfile, tagged with a hash of its inputs
#   localhost/bus-{postgres,redis,kafka}:dev (and :<inputs>), localhost/coredns:<v>-<binary>, localhost/pause:bus
# Each is built only when podman's store (under .local/cluster/podman) lacks it: a second run builds
# nothing unless the project's sources changed. Sourced by up.sh/test.sh; run alone it builds them all
# and prints the project image's name.
# shellcheck shell=bash
images_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$images_here/lib.sh"

CLUSTER_NODE_IMAGE="docker.io/library/node:${NODE_IMAGE_VERSION}-bookworm-slim"
CLUSTER_DEBIAN_IMAGE="localhost/debian:bookworm"
CLUSTER_PAUSE_IMAGE="localhost/pause:bus"
# CoreDNS's image is named after its binary's content (tools.sh rebuilds it when its plugin set changes).
coredns_image_name() { echo "localhost/coredns:$COREDNS_VERSION-$(sha256sum "$CLUSTER_BIN/coredns" | cut -c1-12)"; }
# shellcheck disable=SC2034  # read by up.sh
CLUSTER_DEP_IMAGES=(localhost/bus-postgres:dev localhost/bus-redis:dev localhost/bus-kafka:dev)

podman_configure() {
  mkdir -p "$CLUSTER_CACHE/podman"
  # The VM refuses to raise rlimits and crun cannot handle its hybrid cgroups (shared/notes).
  cat > "$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  cat > "$CONTAINERS_STORAGE_CONF" <<CONF
[storage]
driver = "overlay"
graphroot = "$CLUSTER_CACHE/podman/storage"
runroot = "$CLUSTER_STATE/podman"
CONF
}

image_exists() { podman image exists "$1"; }

# The mirror and suite apt uses on this machine, so the base image matches what apt would install.
debian_mirror() {
  local uri
  uri="$(sed -n 's/^URIs: *\(http[^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)"
  [ -n "$uri" ] || uri="$(sed -n 's/^deb \(http[^ ]*debian\/*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)"
  echo "${uri:-http://deb.debian.org/debian}"
}

build_debian_base() {
  image_exists "$CLUSTER_DEBIAN_IMAGE" && return 0
  local t=$SECONDS dir="$CLUSTER_CACHE/debootstrap"
  cluster_log "image $CLUSTER_DEBIAN_IMAGE: debootstrap from $(debian_mirror)"
  rm -rf "$dir"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$dir" "$(debian_mirror)" >"$CLUSTER_LOGS/debootstrap.log" 2>&1 \
    || { tail -20 "$CLUSTER_LOGS/debootstrap.log" >&2; return 1; }
  rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
  tar -C "$dir" -c . | podman import --quiet - "$CLUSTER_DEBIAN_IMAGE" >/dev/null
  rm -rf "$dir"
  cluster_log "  built in $((SECONDS - t)) s"
}

# podman build of a Containerfile directory ($2) under the name $1; $3... extra build arguments.
build_from_dir() {
  local name="$1" dir="$2"; shift 2
  image_exists "$name" && return 0
  local t=$SECONDS
  cluster_log "image $name"
  podman build --quiet --network=host --pull=never -t "$name" "$@" "$dir" >/dev/null
  cluster_log "  built in $((SECONDS - t)) s"
}

build_node_standin() {
  image_exists "$CLUSTER_NODE_IMAGE" && return 0
  local ctx="$CLUSTER_CACHE/build/node" node_bin npm_dir
  node_bin="$(readlink -f "$CLUSTER_ROOT/node_modules/.bin/node")"
  [ "$("$node_bin" -v)" = "v$NODE_IMAGE_VERSION" ] \
    || { echo "error: node_modules has Node $("$node_bin" -v), the Dockerfile wants $NODE_IMAGE_VERSION" >&2; return 1; }
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$CLUSTER_ROOT/deploy/cluster/images/node/Containerfile" "$ctx/"
  cp "$node_bin" "$ctx/node"
  cp -r "$npm_dir" "$ctx/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/host-ca.crt"
  build_from_dir "$CLUSTER_NODE_IMAGE" "$ctx" --build-arg "NODE_VERSION=$NODE_IMAGE_VERSION"
  rm -rf "$ctx"
}

# Name of the project image: a hash of every file of the Dockerfile's build context (git's view of the
# checkout, tracked and untracked, minus .gitignore's and .dockerignore's plain path entries) and of the
# Dockerfile and .dockerignore themselves, so
# unchanged sources reuse the image and any change the build could see rebuilds it.
project_image_name() {
  local hash excluded=()
  mapfile -t excluded < <(grep -vE '^[[:space:]]*(#|$)|[*?!]' "$CLUSTER_ROOT/.dockerignore" | sed -e 's#/*$##' -e 's#^#:(exclude)#')
  hash="$(cd "$CLUSTER_ROOT" && { git ls-files -co --exclude-standard -z -- . "${excluded[@]}"; printf 'Dockerfile\0.dockerignore\0'; } \
    | sort -z | xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-16)"
  echo "localhost/message-bus:$hash"
}

build_project_image() {
  local name
  name="$(project_image_name)"
  if ! image_exists "$name"; then
    local t=$SECONDS
    cluster_log "image $name: the project's Dockerfile"
    podman build --network=host --pull=never -t "$name" -f "$CLUSTER_ROOT/Dockerfile" "$CLUSTER_ROOT" \
      >"$CLUSTER_LOGS/project-image.log" 2>&1 || { tail -40 "$CLUSTER_LOGS/project-image.log" >&2; return 1; }
    # Builds leave GBs of intermediate layers; older project images go too.
    podman images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/message-bus:' | grep -vx "$name" \
      | xargs -r podman rmi --force >/dev/null 2>&1 || true
    podman image prune --force >/dev/null
    cluster_log "  built in $((SECONDS - t)) s"
  fi
  echo "$name"
}

# A hash of the files an image is built from, so a changed Containerfile or entrypoint rebuilds it.
inputs_hash() { find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sed 's/ .*//' | sha256sum | cut -c1-12; }

# The dependency images keep the fixed tag `dev` that deploy/helm/dev-deps/local-images-values.yaml
# names, moved to the build of their current inputs (the tag of that build).
build_dependency_images() {
  local ctx="$CLUSTER_CACHE/build/kafka" libs name built
  for name in postgres redis; do
    built="localhost/bus-$name:$(inputs_hash "$images_here/images/$name")"
    build_from_dir "$built" "$images_here/images/$name"
    podman tag "$built" "localhost/bus-$name:dev"
  done
  built="localhost/bus-kafka:$(inputs_hash "$images_here/images/kafka" "$CLUSTER_ROOT/deploy/local/kafka")"
  if ! image_exists "$built"; then
    libs="$(bash "$CLUSTER_ROOT/deploy/local/stack.sh" kafka-libs)"
    rm -rf "$ctx" && mkdir -p "$ctx"
    cp "$images_here"/images/kafka/* "$ctx/"
    cp -r "$libs" "$ctx/libs"
    cp "$CLUSTER_ROOT/deploy/local/kafka/log4j2.properties" "$ctx/"
    build_from_dir "$built" "$ctx"
    rm -rf "$ctx"
  fi
  podman tag "$built" localhost/bus-kafka:dev
}

build_cluster_images() {
  local ctx="$CLUSTER_CACHE/build/static"
  if ! image_exists "$CLUSTER_PAUSE_IMAGE"; then
    local src
    src="$(cluster_go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    rm -rf "$ctx" && mkdir -p "$ctx"
    gcc -Os -static -o "$ctx/pause" "$src/build/pause/linux/pause.c"
    cp "$images_here/images/pause/Containerfile" "$ctx/"
    build_from_dir "$CLUSTER_PAUSE_IMAGE" "$ctx"
  fi
  if ! image_exists "$(coredns_image_name)"; then
    rm -rf "$ctx" && mkdir -p "$ctx"
    cp "$CLUSTER_BIN/coredns" "$images_here/images/coredns/Containerfile" "$ctx/"
    build_from_dir "$(coredns_image_name)" "$ctx"
  fi
  rm -rf "$ctx"
}

# Every image the cluster runs, built when missing; prints the project image's name.
build_all_images() {
  podman_configure
  mkdir -p "$CLUSTER_LOGS"
  build_debian_base
  build_cluster_images
  build_dependency_images
  build_node_standin
  build_project_image
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  build_all_images
fi
