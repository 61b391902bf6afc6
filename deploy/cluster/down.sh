#!/usr/bin/env bash
# Tears down what deploy/cluster/up.sh started and checks nothing is left: no process of the cluster,
# no mount under its directories, no network namespace, bridge, route or iptables rule of it, no cgroup
# of its pods. The caches (binaries, images) stay. Safe to run twice, or after a failed up.sh.
# Exit status 1 when something could not be removed (it names it).
# usage: deploy/cluster/down.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"

sock="$CLUSTER_STATE/containerd/containerd.sock"
pids_file="$CLUSTER_RUN/pids"

pid_of() { [ -f "$pids_file" ] && awk -v n="$1" '$1 == n {print $2}' "$pids_file"; }

stop_daemon() {
  local name="$1" pid
  pid="$(pid_of "$name")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  local deadline=$((SECONDS + 5))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
}

# The containers' shims belong to our containerd (its socket is on their command line).
our_shims() {
  local pid
  for pid in $(pgrep -f containerd-shim 2>/dev/null); do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$CLUSTER_STATE/containerd" && echo "$pid"
  done
}

stop_containers() {
  [ -S "$sock" ] || return 0
  local id
  for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  done
  for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "$sock" -n k8s.io tasks delete --force "$id" >/dev/null 2>&1 || true
  done
  for id in $(ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null); do
    ctr --address "$sock" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true
  done
}

# Mount points under our directories, deepest first.
our_mounts() {
  awk '{print $2}' /proc/mounts | grep -E "^($CLUSTER_RUN|$CLUSTER_STATE|$CLUSTER_CACHE/containerd|$CLUSTER_CACHE/podman)(/|$)" | sort -r
}

# Network namespaces the CRI made for our pods (recorded by their sandbox's CNI result: the netns
# path containerd passes is /var/run/netns/cni-<uuid>; only cni-* that appeared after up.sh).
our_netns() {
  local before="$CLUSTER_RUN/netns.before" path ns
  for path in /run/netns/cni-*; do
    [ -e "$path" ] || continue
    ns="$(basename "$path")"
    grep -qx "$ns" "$before" 2>/dev/null || echo "$ns"
  done
}

stop_daemon kube-proxy
if [ -x "$CLUSTER_BIN/kube-proxy" ]; then "$CLUSTER_BIN/kube-proxy" --cleanup --proxy-mode iptables >/dev/null 2>&1 || true; fi
stop_daemon kubelet
stop_containers
for pid in $(our_shims); do kill -KILL "$pid" 2>/dev/null || true; done
stop_daemon containerd
stop_daemon kube-scheduler
stop_daemon kube-controller-manager
stop_daemon kube-apiserver
stop_daemon etcd

for ns in $(our_netns); do ip netns delete "$ns" 2>/dev/null || umount "/run/netns/$ns" 2>/dev/null; rm -f "/run/netns/$ns"; done
for m in $(our_mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done

ip route del "$CLUSTER_SERVICE_CIDR" dev "$CLUSTER_BRIDGE" 2>/dev/null || true
ip link del "$CLUSTER_BRIDGE" 2>/dev/null || true
# Veths of pods whose namespace is gone vanish with it; any left on our bridge's name prefix go too.
# kube-proxy --cleanup leaves the kubelet's chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...), in IPv4
# and IPv6: every rule that jumps to a KUBE-* chain or ours goes, then those chains. Nothing else on
# this machine makes KUBE-* chains (no other Kubernetes runs here).
remove_chains() {
  local tool="$1" table rule chain
  command -v "$tool" >/dev/null || return 0
  for table in filter nat mangle raw; do
    "$tool-save" -t "$table" 2>/dev/null | grep -E "^-A [A-Z]+ .*-j (KUBE-[A-Z0-9-]+|$CLUSTER_IPTABLES_CHAIN)( |$)" | grep -vE '^-A (KUBE-|BUS-)' \
      | while read -r rule; do
        eval "\"\$tool\" -w -t \"\$table\" -D ${rule#-A }" 2>/dev/null || true
      done
    for chain in $("$tool-save" -t "$table" 2>/dev/null | sed -n "s/^:\(KUBE-[A-Z0-9-]*\|$CLUSTER_IPTABLES_CHAIN\) .*/\1/p"); do
      "$tool" -w -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $("$tool-save" -t "$table" 2>/dev/null | sed -n "s/^:\(KUBE-[A-Z0-9-]*\|$CLUSTER_IPTABLES_CHAIN\) .*/\1/p"); do
      "$tool" -w -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
}
remove_chains iptables
remove_chains ip6tables
if [ -f "$CLUSTER_RUN/ip_forward.orig" ]; then cat "$CLUSTER_RUN/ip_forward.orig" > /proc/sys/net/ipv4/ip_forward; fi

# Pod cgroups the kubelet made in each cgroup v1 hierarchy (and cgroup v2 when mounted), leaves first.
for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods.slice; do
  [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
done

rm -rf "$CLUSTER_RUN" "$CLUSTER_STATE"

# --- Check: nothing of the cluster is left.
left=()
ours="$(pgrep -af "^$CLUSTER_BIN/|$CLUSTER_RUN|$CLUSTER_STATE" 2>/dev/null || true)"
[ -n "$ours" ] && left+=("processes: $(echo "$ours" | cut -c1-120 | head -3 | tr '\n' ';')")
[ -n "$(our_shims)" ] && left+=("containerd shims")
awk '{print $2}' /proc/mounts | grep -qE "^($CLUSTER_CACHE|$CLUSTER_STATE)(/|$)" && left+=("mounts: $(our_mounts | head -3 | tr '\n' ' ')")
ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1 && left+=("bridge $CLUSTER_BRIDGE")
ip link show type veth 2>/dev/null | grep -q "master $CLUSTER_BRIDGE" && left+=("veths on $CLUSTER_BRIDGE")
ip route show "$CLUSTER_SERVICE_CIDR" 2>/dev/null | grep -q . && left+=("route $CLUSTER_SERVICE_CIDR")
for tool in iptables ip6tables; do
  command -v "$tool-save" >/dev/null || continue
  rules="$("$tool-save" 2>/dev/null | grep -E "KUBE-|$CLUSTER_IPTABLES_CHAIN|$CLUSTER_BRIDGE" || true)"
  [ -n "$rules" ] && left+=("$tool rules: $(echo "$rules" | head -3 | tr '\n' ' ')")
done
[ -n "$(ls /sys/fs/cgroup/*/kubepods 2>/dev/null)" ] && left+=("kubepods cgroups")
if [ ${#left[@]} -gt 0 ]; then
  printf 'error: the cluster left: %s\n' "${left[@]}" >&2
  exit 1
fi
cluster_log "torn down: no process, mount, bridge, route or iptables rule of the cluster is left"
