#!/usr/bin/env bash
# Helm releases of the cluster tier, in the namespace `skaffold dev` uses:
#   release.sh deps               the dependencies and their Secret (deploy/helm/dev-deps, local images)
#   release.sh bus [helm args]    charts/message-bus with the dev values, the tier's values and the
#                                 image images.sh built; hooks on (the migrations Job must succeed),
#                                 --wait. Extra arguments (e.g. --set config.logLevel=info) go to helm:
#                                 the rolling-upgrade test upgrades the release with a config change.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/cluster/images.sh
. "$here/images.sh"
# shellcheck source=deploy/helm/tools.sh
. "$here/../helm/tools.sh"

CLUSTER_NAMESPACE="${CLUSTER_NAMESPACE:-message-bus-dev}"
podman_configure

case "${1:-}" in
  deps)
    "$HELM_BIN" upgrade --install message-bus-deps "$CLUSTER_ROOT/deploy/helm/dev-deps" \
      --namespace "$CLUSTER_NAMESPACE" --create-namespace \
      -f "$CLUSTER_ROOT/deploy/helm/dev-deps/local-images-values.yaml" --wait --timeout 5m
    ;;
  bus)
    shift
    image="$(project_image_name)"
    "$HELM_BIN" upgrade --install message-bus "$CLUSTER_ROOT/charts/message-bus" \
      --namespace "$CLUSTER_NAMESPACE" --create-namespace \
      -f "$CLUSTER_ROOT/deploy/helm/dev-values.yaml" -f "$here/bus-values.yaml" \
      --set "image.repository=${image%:*}" --set "image.tag=${image##*:}" \
      --wait --timeout 10m "$@"
    ;;
  *)
    echo "usage: deploy/cluster/release.sh deps | bus [helm args]" >&2
    exit 2
    ;;
esac
