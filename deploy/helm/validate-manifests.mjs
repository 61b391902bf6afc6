// Validates rendered manifests with kubernetes-models (npm): the Kubernetes object models, and the
// Prometheus Operator models for ServiceMonitor and PrometheusRule. Every object must map to a model;
// an unknown apiVersion/kind fails. Usage: node validate-manifests.mjs FILE.yaml...
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const CRD_PACKAGES = { 'monitoring.coreos.com': '@kubernetes-models/prometheus-operator' };

function modulePath(apiVersion, kind) {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (CRD_PACKAGES[group]) return `${CRD_PACKAGES[group]}/${group}/${version}/${kind}`;
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

let failures = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      failures++;
      console.error(`${file}: YAML error: ${doc.errors[0].message}`);
      continue;
    }
    const obj = doc.toJS();
    if (obj == null) continue;
    const where = `${file}: ${obj.kind}/${obj.metadata?.name}`;
    let Model;
    try {
      const mod = await import(modulePath(String(obj.apiVersion), String(obj.kind)));
      Model = mod[obj.kind];
    } catch {
      Model = undefined;
    }
    if (!Model) {
      failures++;
      console.error(`${where}: no model for ${obj.apiVersion} ${obj.kind}`);
      continue;
    }
    try {
      new Model(obj).validate();
      checked++;
    } catch (err) {
      failures++;
      console.error(`${where}: ${err.message}`);
    }
  }
}
console.error(`   kubernetes-models: ${checked} objects ok, ${failures} failed`);
process.exit(failures > 0 ? 1 : 0);
