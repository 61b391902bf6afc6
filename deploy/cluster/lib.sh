# Shared by the cluster tier's scripts (deploy/cluster/): pinned versions, paths, and small helpers.
# Caches (Go module and build caches, built binaries, container images) live under .local/cluster/ and
# survive teardown, so a second run skips the builds; the running cluster's state lives under
# $CLUSTER_RUN and is removed by down.sh.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this file

CLUSTER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Pinned versions. Kubernetes' staging modules (k8s.io/api, client-go, ...) are v0.<minor>.<patch>.
KUBERNETES_VERSION="v1.36.3"
KUBERNETES_STAGING_VERSION="v0.36.3"
COREDNS_VERSION="v1.14.7"
# The monitoring.coreos.com CRDs (ServiceMonitor, PrometheusRule) the server-side dry run installs.
PROMETHEUS_OPERATOR_VERSION="v0.85.0"
# skaffold of deploy/cluster/skaffold.sh.
SKAFFOLD_VERSION="v2.16.1"
# The Node of the project's Dockerfile (ARG NODE_VERSION), matched by the stand-in base image.
NODE_IMAGE_VERSION="$(sed -n 's/^ARG NODE_VERSION=//p' "$CLUSTER_ROOT/Dockerfile")"

CLUSTER_CACHE="$CLUSTER_ROOT/.local/cluster"
CLUSTER_BIN="$CLUSTER_CACHE/bin"
CLUSTER_RUN="$CLUSTER_CACHE/run"
CLUSTER_LOGS="$CLUSTER_CACHE/logs"
# Runtime sockets and state that must be on a tmpfs-like path, removed at teardown.
CLUSTER_STATE="/run/message-bus-cluster"

# Network: pods on a bridge of their own, Services on a range of their own. Pods get routes to these two
# ranges only (no default route): nothing in a pod can reach anything off this machine.
CLUSTER_BRIDGE="buscni0"
CLUSTER_POD_CIDR="10.244.0.0/16"
CLUSTER_NODE_POD_CIDR="10.244.0.0/24"
CLUSTER_SERVICE_CIDR="10.96.0.0/16"
CLUSTER_NODE_IP="10.244.0.1"            # the bridge's address: apiserver and kubelet listen only here
CLUSTER_API_SERVICE_IP="10.96.0.1"
CLUSTER_DNS_IP="10.96.0.10"
CLUSTER_NODE_NAME="bus-node"
CLUSTER_ETCD_CLIENT_PORT=52379
CLUSTER_ETCD_PEER_PORT=52380
CLUSTER_IPTABLES_CHAIN="BUS-CLUSTER-FORWARD"

export KUBECONFIG="$CLUSTER_RUN/pki/admin.kubeconfig"
export CONTAINERS_CONF="$CLUSTER_CACHE/podman/containers.conf"
export CONTAINERS_STORAGE_CONF="$CLUSTER_CACHE/podman/storage.conf"
# Go caches of the Kubernetes, CoreDNS and Helm builds.
export GOMODCACHE="$CLUSTER_CACHE/go/mod"
export GOCACHE="$CLUSTER_CACHE/go/build"
export GOFLAGS="-buildvcs=false"

cluster_log() { echo "[cluster $(date +%H:%M:%S)] $*" >&2; }

cluster_go() {
  local go_bin
  go_bin="$(command -v go || true)"
  if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
  if [ -z "$go_bin" ]; then
    echo "error: no Go toolchain (go on PATH or /usr/local/go/bin/go); the cluster tier builds Kubernetes with it" >&2
    return 1
  fi
  "$go_bin" "$@"
}

# kubectl from the cluster's own build (same version as the API server).
kc() { "$CLUSTER_BIN/kubectl" "$@"; }
# kc for the failure paths: a request the API server does not answer gives up after 10 s.
kd() { kc --request-timeout=10s "$@"; }

# The pods not Ready among `kubectl get pods "$@"` (e.g. -A, or -n <ns> -l <selector>): "<namespace> <name>" per line.
cluster_pods_not_ready() {
  kd get pods "$@" \
    -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
    | awk '$3 != "True" {print $1, $2}'
}

# Waits until "$@" succeeds, at most $CLUSTER_WAIT seconds (default 120); the last output on failure.
cluster_wait_for() {
  local what="$1"; shift
  local deadline=$((SECONDS + ${CLUSTER_WAIT:-120})) out
  until out="$("$@" 2>&1)"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "error: timed out waiting for $what: $out" >&2
      return 1
    fi
    sleep 1
  done
}

# What a failed run needs to be understood once the cluster is gone (CI keeps only the tier's output):
# the node's conditions, every pod, recent events, and for each pod not Ready its events, its containers'
# last lines (and the previous container's, after a restart); the kubelet's and containerd's last errors;
# the machine's memory, disk and load. On stderr, bounded (each request 10 s at most, none when the
# API server does not answer); never fails.
cluster_diagnose() {
  local ns pod
  {
    echo "---- cluster diagnostics ($(date +%H:%M:%S)) ----"
    echo "# machine: load $(cut -d' ' -f1-3 /proc/loadavg); $(free -m | awk '/^Mem:/ {print $7 " MiB available of " $2}'); disk $(df -h "$CLUSTER_CACHE" | awk 'NR == 2 {print $4 " free of " $2}')"
    if kd get --raw /readyz >/dev/null 2>&1; then
      echo "# node"
      kd get nodes -o wide 2>&1
      kd get node "$CLUSTER_NODE_NAME" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' 2>&1
      echo "# pods"
      kd get pods -A -o wide 2>&1
      echo "# events (last 40)"
      kd get events -A --sort-by=.lastTimestamp 2>&1 | tail -40
      cluster_pods_not_ready -A 2>/dev/null | head -8 | while read -r ns pod; do
        echo "# pod $ns/$pod is not Ready"
        kd -n "$ns" get pod "$pod" -o jsonpath='{range .status.initContainerStatuses[*]}{.name} (init){": restarts "}{.restartCount}{", state "}{.state}{", last "}{.lastState}{"\n"}{end}{range .status.containerStatuses[*]}{.name}{": restarts "}{.restartCount}{", state "}{.state}{", last "}{.lastState}{"\n"}{end}' 2>&1
        kd -n "$ns" describe pod "$pod" 2>&1 | sed -n '/^Events:/,$p' | tail -20
        kd -n "$ns" logs "$pod" --all-containers --tail=30 2>&1
        kd -n "$ns" logs "$pod" --all-containers --tail=30 --previous 2>/dev/null | sed 's/^/(previous) /'
      done
    else
      echo "# the API server does not answer /readyz within 10 s: no cluster state to show"
    fi
    echo "# kubelet's last errors"
    grep '^E' "$CLUSTER_LOGS/kubelet.log" 2>/dev/null | tail -20
    echo "# containerd's last errors"
    grep 'level=error' "$CLUSTER_LOGS/containerd.log" 2>/dev/null | tail -20
    echo "---- end of cluster diagnostics ----"
  } >&2 || true
}
