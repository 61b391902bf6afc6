#!/usr/bin/env bash
# Starts a single-node Kubernetes cluster on this machine from the binaries tools.sh built: etcd (apt),
# kube-apiserver, controller-manager, scheduler, containerd (apt) + runc + the bridge CNI plugin,
# kubelet, kube-proxy, and CoreDNS as the cluster's only resolver. Needs root. State under
# .local/cluster/run and /run/message-bus-cluster; deploy/cluster/down.sh removes every trace of it.
#
# Network safety (binding): pods sit on their own bridge ($CLUSTER_BRIDGE) with routes to the pod and
# Service ranges only — no default route, no masquerading — and a FORWARD rule drops anything that would
# leave the bridge, so nothing in a pod reaches past this machine. DNS is CoreDNS answering
# cluster.local only. The API server and kubelet listen on the bridge's address only.
# usage: deploy/cluster/up.sh        (prints nothing on stdout; KUBECONFIG is .local/cluster/run/pki/admin.kubeconfig)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/lib.sh
. "$here/lib.sh"

[ "$(id -u)" = 0 ] || { echo "error: the cluster needs root (containerd, kubelet, network)" >&2; exit 1; }
if [ -e "$CLUSTER_RUN" ] || ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1; then
  echo "error: a cluster is already running or was not torn down: run deploy/cluster/down.sh first" >&2
  exit 1
fi

pki="$CLUSTER_RUN/pki"
mkdir -p "$pki" "$CLUSTER_LOGS" "$CLUSTER_STATE" "$CLUSTER_RUN/cni/net.d" "$CLUSTER_RUN/kubelet"
: > "$CLUSTER_RUN/pids"
# down.sh removes only the pod network namespaces that appear after this.
ls /run/netns 2>/dev/null > "$CLUSTER_RUN/netns.before" || true

# Starts "$@" in the background, its output in $CLUSTER_LOGS/<name>.log, its pid in $CLUSTER_RUN/pids.
start_daemon() {
  local name="$1"; shift
  setsid "$@" </dev/null >"$CLUSTER_LOGS/$name.log" 2>&1 &
  echo "$name $!" >> "$CLUSTER_RUN/pids"
}

# --- PKI: one CA; the API server's serving certificate; one client certificate for the control plane,
# kubelet and the test (system:masters: a throwaway single-node test cluster); the service-account key.
make_pki() {
  local san="IP:$CLUSTER_NODE_IP,IP:$CLUSTER_API_SERVICE_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  (
    cd "$pki"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=message-bus-cluster-ca" -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=cluster-admin" -keyout admin.key -out admin.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' > admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile admin.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
  cat > "$KUBECONFIG" <<KC
apiVersion: v1
kind: Config
clusters:
  - name: bus
    cluster: {server: "https://$CLUSTER_NODE_IP:6443", certificate-authority: "$pki/ca.crt"}
users:
  - name: admin
    user: {client-certificate: "$pki/admin.crt", client-key: "$pki/admin.key"}
contexts:
  - name: bus
    context: {cluster: bus, user: admin}
current-context: bus
KC
  chmod 600 "$KUBECONFIG"
}

# --- Network: the bridge with the node's address, a host route for the Service range onto it (so
# host → ClusterIP never follows the default route), and the FORWARD guard.
make_network() {
  ip link add "$CLUSTER_BRIDGE" type bridge
  ip addr add "$CLUSTER_NODE_IP/24" dev "$CLUSTER_BRIDGE"
  ip link set "$CLUSTER_BRIDGE" up
  ip route add "$CLUSTER_SERVICE_CIDR" dev "$CLUSTER_BRIDGE" src "$CLUSTER_NODE_IP"
  cat /proc/sys/net/ipv4/ip_forward > "$CLUSTER_RUN/ip_forward.orig"
  # Forwarding is needed for pod → Service → pod; the guard below allows it on the bridge only.
  iptables -w -N "$CLUSTER_IPTABLES_CHAIN"
  iptables -w -A "$CLUSTER_IPTABLES_CHAIN" -i "$CLUSTER_BRIDGE" -o "$CLUSTER_BRIDGE" -j RETURN
  iptables -w -A "$CLUSTER_IPTABLES_CHAIN" -j DROP
  iptables -w -I FORWARD 1 -j "$CLUSTER_IPTABLES_CHAIN"
  echo 1 > /proc/sys/net/ipv4/ip_forward
  mkdir -p "$CLUSTER_RUN/cni/ipam"
  # Routes: the pod range and the Service range, nothing else (no 0.0.0.0/0); no masquerading.
  cat > "$CLUSTER_RUN/cni/net.d/10-bus.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "bus-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CLUSTER_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CLUSTER_RUN/cni/ipam",
        "ranges": [[{"subnet": "$CLUSTER_NODE_POD_CIDR", "gateway": "$CLUSTER_NODE_IP"}]],
        "routes": [{"dst": "$CLUSTER_POD_CIDR"}, {"dst": "$CLUSTER_SERVICE_CIDR"}]
      }
    },
    {"type": "loopback"}
  ]
}
CNI
}

start_control_plane() {
  start_daemon etcd etcd --name bus --data-dir "$CLUSTER_RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$CLUSTER_ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$CLUSTER_ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$CLUSTER_ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$CLUSTER_ETCD_PEER_PORT" \
    --initial-cluster "bus=http://127.0.0.1:$CLUSTER_ETCD_PEER_PORT"
  start_daemon kube-apiserver "$CLUSTER_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$CLUSTER_ETCD_CLIENT_PORT" \
    --bind-address "$CLUSTER_NODE_IP" --advertise-address "$CLUSTER_NODE_IP" --secure-port 6443 \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range "$CLUSTER_SERVICE_CIDR" --authorization-mode Node,RBAC \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    --kubelet-preferred-address-types InternalIP
  cluster_wait_for "the API server" kc get --raw /readyz
  start_daemon kube-controller-manager "$CLUSTER_BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"
  start_daemon kube-scheduler "$CLUSTER_BIN/kube-scheduler" --kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 --leader-elect=false
}

start_node() {
  local state="$CLUSTER_STATE/containerd"
  mkdir -p "$state"
  cat > "$CLUSTER_RUN/containerd.toml" <<TOML
version = 2
root = "$CLUSTER_CACHE/containerd"
state = "$state"
[grpc]
  address = "$state/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$CLUSTER_PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # The VM refuses negative oom_score_adj (the kubelet asks -998 for sandboxes): clamp to containerd's own.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER_RUN/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
TOML
  start_daemon containerd containerd --config "$CLUSTER_RUN/containerd.toml"
  cluster_wait_for containerd ctr --address "$state/containerd.sock" version
  import_images

  # Pods with dnsPolicy Default get this resolver: nothing (127.0.0.1 in the pod's own namespace).
  echo "nameserver 127.0.0.1" > "$CLUSTER_RUN/kubelet/resolv.conf"
  cat > "$CLUSTER_RUN/kubelet/config.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $CLUSTER_NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$state/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: cluster.local
resolvConf: $CLUSTER_RUN/kubelet/resolv.conf
podCIDR: $CLUSTER_NODE_POD_CIDR
# Disk and memory are shared with other work on this machine: no image GC or evictions from the
# machine's own usage.
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "1%", nodefs.available: "1%", imagefs.available: "1%"}
serializeImagePulls: false
KUBELET
  start_daemon kubelet "$CLUSTER_BIN/kubelet" --config "$CLUSTER_RUN/kubelet/config.yaml" --kubeconfig "$KUBECONFIG" \
    --root-dir "$CLUSTER_RUN/kubelet/root" --cert-dir "$CLUSTER_RUN/kubelet/pki" \
    --hostname-override "$CLUSTER_NODE_NAME" --node-ip "$CLUSTER_NODE_IP"
  # No NodePorts on the machine's own addresses, no conntrack tuning of the machine.
  start_daemon kube-proxy "$CLUSTER_BIN/kube-proxy" --kubeconfig "$KUBECONFIG" --proxy-mode iptables \
    --hostname-override "$CLUSTER_NODE_NAME" --cluster-cidr "$CLUSTER_POD_CIDR" \
    --nodeport-addresses "$CLUSTER_NODE_IP/32" --iptables-localhost-nodeports=false \
    --healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249 \
    --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0
  CLUSTER_WAIT=120 cluster_wait_for "node $CLUSTER_NODE_NAME Ready" \
    kc wait --for=condition=Ready "node/$CLUSTER_NODE_NAME" --timeout=2s
  # kube-proxy inserts its FORWARD rules at the top: the guard goes back in front of them.
  cluster_wait_for "kube-proxy's rules" iptables -w -C FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
  iptables -w -D FORWARD -j "$CLUSTER_IPTABLES_CHAIN"
  iptables -w -I FORWARD 1 -j "$CLUSTER_IPTABLES_CHAIN"
}

# Every image the cluster runs, from podman's store into containerd's (only when podman's differs).
import_images() {
  local sock="$CLUSTER_STATE/containerd/containerd.sock" image id stamp
  for image in "$CLUSTER_PAUSE_IMAGE" "$(coredns_image_name)" "${CLUSTER_DEP_IMAGES[@]}" "$(project_image_name)"; do
    id="$(podman image inspect --format '{{.Id}}' "$image")"
    stamp="$CLUSTER_CACHE/containerd/imported-$(echo "$image" | tr '/:' '__')"
    if [ "$(cat "$stamp" 2>/dev/null)" = "$id" ] && ctr --address "$sock" -n k8s.io images ls -q "name==$image" | grep -q .; then
      continue
    fi
    local t=$SECONDS
    podman save --format docker-archive "$image" | ctr --address "$sock" -n k8s.io images import - >/dev/null
    echo "$id" > "$stamp"
    cluster_log "  imported $image into containerd in $((SECONDS - t)) s"
  done
}

start_dns() {
  sed -e "s|@DNS_IP@|$CLUSTER_DNS_IP|" -e "s|@IMAGE@|$(coredns_image_name)|" "$here/manifests/coredns.yaml" | kc apply -f - >/dev/null
  kc -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null
}

# shellcheck source=deploy/cluster/images.sh
. "$here/images.sh"
podman_configure
started=$SECONDS
make_pki
make_network
start_control_plane
start_node
start_dns
cluster_log "cluster up in $((SECONDS - started)) s (KUBECONFIG=$KUBECONFIG)"
