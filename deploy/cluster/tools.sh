#!/usr/bin/env bash
# Installs what the cluster tier needs, from the package registries only:
#   apt: podman/buildah/runc (image builds), containerd, etcd, the CNI plugins, iptables, debootstrap, gcc
#   Go module proxy: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and
#     kubectl of Kubernetes $KUBERNETES_VERSION, CoreDNS $COREDNS_VERSION, Helm (deploy/helm/tools.sh)
# Binaries land in .local/cluster/bin with a stamp of their version; a second run finds them and
# builds nothing. usage: deploy/cluster/tools.sh            (what the tier needs)
#                        deploy/cluster/tools.sh skaffold   (skaffold only, for deploy/cluster/skaffold.sh)
#                        deploy/cluster/tools.sh go-builds  (the Go builds only: no apt, no root; .ci/run
#                                                            runs it niced beside npm test)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"
# shellcheck source=deploy/helm/tools.sh
. "$here/../helm/tools.sh"

apt_packages=(podman buildah runc containerd etcd-server containernetworking-plugins iptables conntrack
  debootstrap gcc libc6-dev openssl)
kube_components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

install_apt_packages() {
  local missing=() p
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  cluster_log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# k8s.io/kubernetes as a module lacks its staging/ directory, which its go.mod replaces point at: the
# copy here points each replace at the published staging module of the same release instead.
build_kubernetes() {
  local stamp="$KUBERNETES_VERSION" c all=1
  for c in "${kube_components[@]}"; do
    [ -x "$CLUSTER_BIN/$c" ] && [ "$(cat "$CLUSTER_BIN/$c.stamp" 2>/dev/null)" = "$stamp" ] || all=0
  done
  [ "$all" = 1 ] && return 0
  local started=$SECONDS src="$CLUSTER_CACHE/go/src/kubernetes-$KUBERNETES_VERSION"
  cluster_log "building Kubernetes $KUBERNETES_VERSION from the Go module proxy (~5 min on 2 cores the first time)"
  if [ ! -f "$src/.prepared" ]; then
    local dir
    dir="$(cluster_go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    rm -rf "$src" && mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src" && chmod -R u+w "$src"
    rm -f "$src/go.work" "$src/go.work.sum"
    local m
    # shellcheck disable=SC2013  # module paths hold no whitespace
    for m in $(sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\2#p' "$src/go.mod"); do
      (cd "$src" && cluster_go mod edit -dropreplace="$m" -replace="$m=$m@$KUBERNETES_STAGING_VERSION")
    done
    touch "$src/.prepared"
  fi
  local minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  mkdir -p "$CLUSTER_BIN"
  for c in "${kube_components[@]}"; do
    if [ -x "$CLUSTER_BIN/$c" ] && [ "$(cat "$CLUSTER_BIN/$c.stamp" 2>/dev/null)" = "$stamp" ]; then continue; fi
    local t=$SECONDS pkg="./cmd/$c"
    [ "$c" = kubectl ] && pkg="./cmd/kubectl"
    (cd "$src" && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
      cluster_go build -trimpath -ldflags "$ldflags" -o "$CLUSTER_BIN/$c" "$pkg")
    echo "$stamp" > "$CLUSTER_BIN/$c.stamp"
    cluster_log "  $c built in $((SECONDS - t)) s"
  done
  cluster_log "Kubernetes built in $((SECONDS - started)) s"
}

# CoreDNS with only the plugins deploy/cluster/manifests/coredns.yaml's Corefile uses: its module's
# full plugin set pulls in every cloud provider's SDK (~7 min to compile on 2 cores, against ~1-2).
COREDNS_PLUGINS=(errors health ready kubernetes cache)
build_coredns() {
  local stamp="$COREDNS_VERSION plugins=${COREDNS_PLUGINS[*]}"
  if [ -x "$CLUSTER_BIN/coredns" ] && [ "$(cat "$CLUSTER_BIN/coredns.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  local started=$SECONDS src="$CLUSTER_CACHE/go/src/coredns-$COREDNS_VERSION" dir p
  cluster_log "building CoreDNS $COREDNS_VERSION (plugins: ${COREDNS_PLUGINS[*]}) from the Go module proxy"
  dir="$(cluster_go mod download -json "github.com/coredns/coredns@$COREDNS_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  rm -rf "$src" && mkdir -p "$(dirname "$src")"
  cp -r "$dir" "$src" && chmod -R u+w "$src"
  # The generated list of compiled-in plugins (core/plugin/zplugin.go), cut down to ours.
  {
    printf '// Written by deploy/cluster/tools.sh: the plugins of the cluster tier'"'"'s Corefile only.\n\npackage plugin\n\nimport (\n'
    for p in "${COREDNS_PLUGINS[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
    printf ')\n'
  } > "$src/core/plugin/zplugin.go"
  (cd "$src" && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
    cluster_go build -trimpath -ldflags "-s -w" -o "$CLUSTER_BIN/coredns" .)
  echo "$stamp" > "$CLUSTER_BIN/coredns.stamp"
  cluster_log "CoreDNS built in $((SECONDS - started)) s"
}

# skaffold v2 for deploy/cluster/skaffold.sh (not part of the tier). Its go.mod has replace directives, so
# `go install …@version` refuses it: it builds inside a copy of its module, like Kubernetes.
build_skaffold() {
  if [ -x "$CLUSTER_BIN/skaffold" ] && [ "$(cat "$CLUSTER_BIN/skaffold.stamp" 2>/dev/null)" = "$SKAFFOLD_VERSION" ]; then
    return 0
  fi
  local started=$SECONDS src="$CLUSTER_CACHE/go/src/skaffold-$SKAFFOLD_VERSION" dir
  cluster_log "building skaffold $SKAFFOLD_VERSION from the Go module proxy (~3-5 min on 2 cores the first time)"
  dir="$(cluster_go mod download -json "github.com/GoogleContainerTools/skaffold/v2@$SKAFFOLD_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  rm -rf "$src" && mkdir -p "$(dirname "$src")"
  cp -r "$dir" "$src" && chmod -R u+w "$src"
  (cd "$src" && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 cluster_go build -trimpath \
    -ldflags "-s -w -X github.com/GoogleContainerTools/skaffold/v2/pkg/skaffold/version.version=$SKAFFOLD_VERSION" \
    -o "$CLUSTER_BIN/skaffold" ./cmd/skaffold)
  echo "$SKAFFOLD_VERSION" > "$CLUSTER_BIN/skaffold.stamp"
  cluster_log "skaffold built in $((SECONDS - started)) s"
}

# Once the binaries are built, their Go caches and module copies (~8 GB after all three) serve only a
# rebuild of a new version, which downloads again: a checkout keeps the binaries alone.
trim_go_caches() {
  # `go clean -cache` leaves a README in the build cache: only directories mean there is something to trim.
  [ -n "$(find "$GOCACHE" "$GOMODCACHE" "$CLUSTER_CACHE/go/src" -mindepth 1 -type d -print -quit 2> /dev/null)" ] || return 0
  cluster_go clean -cache -modcache
  rm -rf "$CLUSTER_CACHE/go/src"
  cluster_log "Go build caches removed (the binaries stay in $CLUSTER_BIN)"
}

case "${1:-}" in
  skaffold) build_skaffold; trim_go_caches; exit 0 ;;
  go-builds) build_kubernetes; build_coredns; build_skaffold; trim_go_caches; exit 0 ;;
esac

install_apt_packages
build_kubernetes
build_coredns
trim_go_caches
ensure_chart_tools
