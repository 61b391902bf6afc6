#!/usr/bin/env bash
# The cluster test tier (`npm run test:cluster`, docs/deploy.md "The cluster tier"). From nothing on a
# Debian machine with root: installs the tools (tools.sh), builds the images (images.sh), starts a
# single-node cluster (up.sh), installs the dev dependencies and the chart with hooks on and --wait
# (release.sh), runs `helm test`, validates the rendered sandbox/preview/inline-secrets values against
# the API server (server-side dry run, strict, with the monitoring CRDs installed), runs the jest
# project `cluster` (test/cluster: network safety, a token, every message type published, received
# and acked, /metrics of every Deployment, the rolling upgrade without loss), runs `skaffold dev` of the
# dev profiles over its releases (skaffold.sh) until its port-forwards answer, and tears everything down (down.sh), failing when
# anything is left behind.
#
# Exit status: 0 passed; 1 failed; 77 skipped because this machine cannot run it (the reason is printed).
# Extra arguments go to jest. CLUSTER_KEEP=1 leaves the cluster running afterwards (run down.sh yourself).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"

skip() { echo "cluster tier SKIPPED: $*" >&2; exit 77; }
[ "$(uname -s)" = Linux ] || skip "it needs Linux (containerd, kubelet); this is $(uname -s)"
[ "$(id -u)" = 0 ] || skip "it needs root (containerd, kubelet, a bridge and iptables rules); run it as root"
command -v apt-get >/dev/null || skip "it installs its tools with apt-get (Debian/Ubuntu); none here"
cluster_go version >/dev/null 2>&1 || skip "it builds Kubernetes from the Go module proxy and there is no Go toolchain (go, /usr/local/go/bin/go)"
[ -d /sys/fs/cgroup ] || skip "no cgroup file system at /sys/fs/cgroup"

# CLUSTER_BUILD_DEADLINE (epoch seconds; .ci/run sets it from CI's time budget): the cold builds (tools,
# images) must end by then, else the tier is skipped naming why, rather than taking CI past its limit.
within_build_deadline() {
  [ -n "${CLUSTER_BUILD_DEADLINE:-}" ] || { "$@"; return; }
  local left=$((CLUSTER_BUILD_DEADLINE - $(date +%s)))
  [ "$left" -gt 0 ] || return 124
  timeout -k 10 "$left" "$@"
}
# A phase of external commands (so `||` here does not switch off their own `set -e`).
build_phase() {
  local name="$1" t=$SECONDS rc=0
  shift
  within_build_deadline "$@" || rc=$?
  timings+=("$name $((SECONDS - t)) s")
  if [ "$rc" -eq 0 ]; then cluster_log "$name done in $((SECONDS - t)) s"; return 0; fi
  [ "$rc" -eq 124 ] && skip "the $name phase did not finish before CI's build deadline ($(date -d "@$CLUSTER_BUILD_DEADLINE" +%H:%M:%S)); run deploy/cluster/test.sh alone"
  exit "$rc"
}

# shellcheck source=deploy/local/lib.sh
. "$CLUSTER_ROOT/deploy/local/lib.sh"
set -e
ensure_node_modules
mkdir -p "$CLUSTER_LOGS"
started=$SECONDS
timings=()
phase() {
  local name="$1" t=$SECONDS; shift
  "$@"
  timings+=("$name $((SECONDS - t)) s")
  cluster_log "$name done in $((SECONDS - t)) s"
}

teardown() {
  local status=$?
  set +e
  [ "$status" -eq 0 ] || cluster_diagnose
  if [ "${CLUSTER_KEEP:-0}" = 1 ]; then
    cluster_log "CLUSTER_KEEP=1: the cluster stays up (KUBECONFIG=$KUBECONFIG); deploy/cluster/down.sh removes it"
  else
    local t=$SECONDS
    bash "$here/down.sh" || status=1
    timings+=("teardown $((SECONDS - t)) s")
  fi
  local times="cluster tier: ${timings[*]/%/;} total $((SECONDS - started)) s"
  echo "$times" >&2
  mkdir -p "$CLUSTER_ROOT/.local/ci" && echo "$times" > "$CLUSTER_ROOT/.local/ci/cluster-times.txt"
  exit "$status"
}

build_phase tools bash "$here/tools.sh"
build_phase skaffold-build bash "$here/tools.sh" skaffold
# shellcheck source=deploy/helm/tools.sh
. "$CLUSTER_ROOT/deploy/helm/tools.sh"
build_phase images bash "$here/images.sh" >/dev/null
if [ -e "$CLUSTER_RUN" ]; then
  cluster_log "a cluster of an earlier run is still there: removing it first"
  bash "$here/down.sh"
fi
trap teardown EXIT
phase cluster bash "$here/up.sh"
phase install-deps bash "$here/release.sh" deps >/dev/null
phase install-bus bash "$here/release.sh" bus >/dev/null
# (No --logs: the test pod is deleted once it succeeded, hook-delete-policy hook-succeeded.)
phase helm-test "$HELM_BIN" test message-bus --namespace message-bus-dev --timeout 3m

# The hosted environments' values, against this API server: every object, strict field validation,
# the monitoring CRDs installed (ServiceMonitor, PrometheusRule), admission included.
server_dry_run() {
  local crds values env_name out="$CLUSTER_RUN/rendered"
  crds="$(cluster_go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/example/prometheus-operator-crd"
  kc apply --server-side -f "$crds/monitoring.coreos.com_servicemonitors.yaml" -f "$crds/monitoring.coreos.com_prometheusrules.yaml" >/dev/null
  # Retried: `kubectl wait` on a CRD created a moment ago fails at once ("<nil> is of the type <nil>")
  # while its status has no conditions yet, instead of waiting for them.
  cluster_wait_for "the monitoring CRDs to be established" \
    kc wait --for=condition=Established --timeout=10s crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com
  mkdir -p "$out"
  for values in "$CLUSTER_ROOT"/charts/message-bus/ci/*-values.yaml; do
    env_name="$(basename "$values" -values.yaml)"
    kc create namespace "message-bus-$env_name" >/dev/null
    "$HELM_BIN" template message-bus "$CLUSTER_ROOT/charts/message-bus" -f "$values" --namespace "message-bus-$env_name" > "$out/$env_name.yaml"
    kc apply --dry-run=server --validate=strict -f "$out/$env_name.yaml" > "$out/$env_name.result"
    cluster_log "  $env_name: $(grep -c 'server dry run' "$out/$env_name.result") objects accepted (server dry run, strict)"
    kc delete namespace "message-bus-$env_name" --wait=false >/dev/null
  done
}
phase server-dry-run server_dry_run

export CLUSTER_KUBECTL="$CLUSTER_BIN/kubectl" CLUSTER_NAMESPACE=message-bus-dev \
  CLUSTER_CNI_CONFIG="$CLUSTER_RUN/cni/net.d/10-bus.conflist" CLUSTER_RELEASE_SCRIPT="$here/release.sh" \
  CLUSTER_POD_CIDR CLUSTER_SERVICE_CIDR
phase jest "${JEST[@]}" --selectProjects cluster --runInBand "$@"

# skaffold as a platform team runs it (docs/deploy.md, "skaffold on the tier's cluster"): `skaffold dev`
# builds the image through podman's Docker API, deploys both releases over the tier's and port-forwards;
# then every Deployment of the bus runs skaffold's one image, the gateway and the portal answer on
# 127.0.0.1 through skaffold's port-forwards, and Ctrl-C (SIGINT) ends skaffold dev within a minute.
skaffold_forwarded_port() {
  # skaffold logs "Port forwarding service/<name> in namespace <ns>, remote port <p> -> http://127.0.0.1:<local>";
  # the local port is the one in skaffold.yaml unless it was taken, so it is read from there.
  grep -o "service/$1 in namespace message-bus-dev, remote port [0-9]* -> http://127.0.0.1:[0-9]*" \
    "$CLUSTER_LOGS/skaffold-dev.log" | tail -1 | sed 's/.*://' || true
}
skaffold_check() {
  local log="$CLUSTER_LOGS/skaffold-dev.log" pid images gateway portal rc=0
  setsid bash "$here/skaffold.sh" dev --port-forward=user --cleanup=false > "$log" 2>&1 &
  pid=$!
  local deadline=$((SECONDS + 600))
  until [ -n "$(skaffold_forwarded_port message-bus-gateway)" ] && [ -n "$(skaffold_forwarded_port message-bus-portal)" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "error: skaffold dev exited before it port-forwarded the gateway and the portal" >&2
      rc=1
      break
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "error: skaffold dev did not port-forward the gateway and the portal within 600 s" >&2
      rc=1
      break
    fi
    sleep 2
  done
  if [ "$rc" -eq 0 ]; then
    images="$(kc -n message-bus-dev get deployments -l app.kubernetes.io/instance=message-bus \
      -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}{"\n"}{end}' | sort -u)"
    if [ "$(printf '%s\n' "$images" | wc -l)" -ne 1 ] || [[ "$images" != message-bus:* ]]; then
      echo "error: under skaffold dev the bus's Deployments run '$images', not skaffold's one message-bus:<image id>" >&2
      rc=1
    fi
  fi
  if [ "$rc" -eq 0 ]; then
    gateway="$(skaffold_forwarded_port message-bus-gateway)"
    portal="$(skaffold_forwarded_port message-bus-portal)"
    cluster_wait_for "the gateway's /v1/health on 127.0.0.1:$gateway (skaffold's port-forward)" curl -sf -m 2 "http://127.0.0.1:$gateway/v1/health" || rc=1
    cluster_wait_for "the portal's /readyz on 127.0.0.1:$portal (skaffold's port-forward)" curl -sf -m 2 "http://127.0.0.1:$portal/readyz" || rc=1
  fi
  # Ctrl-C, as a person ends skaffold dev; the releases stay (--cleanup=false): down.sh removes the cluster.
  kill -INT -- "-$pid" 2>/dev/null || true
  local stop_deadline=$((SECONDS + 60))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$stop_deadline" ]; do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "error: skaffold dev did not end within 60 s of SIGINT" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
    rc=1
  fi
  wait "$pid" 2>/dev/null || true  # skaffold dev's own status after SIGINT is not the check's
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log" >&2
    return 1
  fi
  cluster_log "  skaffold dev: every Deployment on $images; gateway (127.0.0.1:$gateway) and portal (127.0.0.1:$portal) answer through its port-forwards; SIGINT ended it"
}
phase skaffold skaffold_check
