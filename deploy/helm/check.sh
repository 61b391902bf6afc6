#!/usr/bin/env bash
# The chart check (CI, `npm run chart:check`, test/chart.test.ts). Installs Helm, kubernetes-validate
# and hadolint when missing (deploy/helm/tools.sh), then
#   0. the Dockerfile with hadolint (its rules and ShellCheck on every RUN; no Docker engine here)
# and for every charts/message-bus/ci/*-values.yaml and deploy/helm/dev-values.yaml
#   1. helm lint --strict
#   2. helm template → .local/helm/rendered/<name>.yaml
#   3. every rendered object against the Kubernetes JSON schemas, strict (unknown fields refused), for
#      the oldest Kubernetes the chart supports and the newest the schemas know (kubernetes-validate)
#   4. every object again with kubernetes-models (npm), which also carries the Prometheus Operator
#      CRD schemas: ServiceMonitor and PrometheusRule are validated there (not strict), and any kind
#      neither validator knows fails the check;
# then the dev dependencies chart deploy/helm/dev-deps the same way (steps 1-4, into <out>/dev-deps/),
# and last `helm package` of the chart.
# usage: deploy/helm/check.sh [--out DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=deploy/helm/tools.sh
. "$here/tools.sh"
# shellcheck source=deploy/local/lib.sh
. "$here/../local/lib.sh"
cd "$ROOT"

out="$ROOT/.local/helm/rendered"
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out="$2"; fi
chart="$ROOT/charts/message-bus"
# Oldest supported (Chart.yaml kubeVersion) and newest with schemas in kubernetes-validate.
kube_versions=(1.30.0 1.37.0)
# Custom resources the core schemas do not have; validated by validate-manifests.mjs.
crd_kinds='^(ServiceMonitor|PrometheusRule)$'

started=$SECONDS
ensure_node_modules >/dev/null
ensure_chart_tools
helm="$HELM_BIN"
mkdir -p "$out"
rm -f "$out"/*.yaml

"$HADOLINT_BIN" --no-color "$ROOT/Dockerfile" >&2
echo "== Dockerfile: hadolint ok" >&2

shopt -s nullglob
values_files=("$chart"/ci/*-values.yaml "$ROOT/deploy/helm/dev-values.yaml")
if [ ${#values_files[@]} -eq 0 ]; then echo "no values files in $chart/ci" >&2; exit 1; fi

for values in "${values_files[@]}"; do
  env_name="$(basename "$values" -values.yaml)"
  echo "== $env_name ($(basename "$values"))" >&2
  "$helm" lint --strict "$chart" -f "$values" --kube-version "${kube_versions[0]}" >/dev/null \
    || { "$helm" lint --strict "$chart" -f "$values" --kube-version "${kube_versions[0]}"; exit 1; }
  echo "   helm lint --strict: ok" >&2
  "$helm" template message-bus "$chart" -f "$values" --namespace "message-bus-$env_name" \
    --kube-version "${kube_versions[0]}" > "$out/$env_name.yaml"
  echo "   helm template: $(grep -c '^kind:' "$out/$env_name.yaml") objects → ${out#"$ROOT"/}/$env_name.yaml" >&2
  for kv in "${kube_versions[@]}"; do
    report="$("$KUBE_VALIDATE_BIN" --strict --kubernetes-version "$kv" "$out/$env_name.yaml" 2>&1)" \
      || { echo "$report" | grep -v '^INFO' >&2; echo "   schema check against Kubernetes $kv failed" >&2; exit 1; }
    unknown="$(echo "$report" | sed -n "s/.*Couldn't find schema for kind \([A-Za-z]*\) .*/\1/p" | grep -Ev "$crd_kinds" || true)"
    if [ -n "$unknown" ]; then echo "   no schema for kind(s): $unknown" >&2; exit 1; fi
    echo "   Kubernetes $kv schemas (strict): $(echo "$report" | grep -c '^INFO.*passed') objects ok" >&2
  done
done

# The dev dependencies chart (`skaffold dev` installs it before the bus), with the local images' values.
# Its render goes to a subdirectory: it is not the bus chart the tests read from "$out".
deps_chart="$here/dev-deps"
mkdir -p "$out/dev-deps"
echo "== dev-deps ($(basename "$deps_chart"))" >&2
"$helm" lint --strict "$deps_chart" -f "$deps_chart/local-images-values.yaml" --kube-version "${kube_versions[0]}" >/dev/null \
  || { "$helm" lint --strict "$deps_chart" -f "$deps_chart/local-images-values.yaml" --kube-version "${kube_versions[0]}"; exit 1; }
"$helm" template message-bus-deps "$deps_chart" -f "$deps_chart/local-images-values.yaml" --namespace message-bus-dev \
  --kube-version "${kube_versions[0]}" > "$out/dev-deps/dev-deps.yaml"
for kv in "${kube_versions[@]}"; do
  "$KUBE_VALIDATE_BIN" --strict --kubernetes-version "$kv" "$out/dev-deps/dev-deps.yaml" >/dev/null 2>&1 \
    || { "$KUBE_VALIDATE_BIN" --strict --kubernetes-version "$kv" "$out/dev-deps/dev-deps.yaml" | grep -v '^INFO' >&2; exit 1; }
done
echo "   helm lint --strict, template, Kubernetes ${kube_versions[*]} schemas (strict): ok" >&2

node "$here/validate-manifests.mjs" "$out"/*.yaml "$out/dev-deps/dev-deps.yaml"
# The chart packages (Chart.yaml, .helmignore) as `helm push`/a chart repository would take it.
"$helm" package "$chart" --destination "$out" >/dev/null
echo "   helm package: $(basename "$out"/message-bus-*.tgz)" >&2
rm -f "$out"/message-bus-*.tgz
echo "chart check passed in $((SECONDS - started)) s" >&2
