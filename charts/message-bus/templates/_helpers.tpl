{{/*
Names and labels.
*/}}
{{- define "message-bus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "message-bus.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "message-bus.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "message-bus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "message-bus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "message-bus.labels" -}}
helm.sh/chart: {{ include "message-bus.chart" . }}
{{ include "message-bus.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: message-bus
bus.example/environment: {{ .Values.environment }}
{{- end -}}

{{/*
The components: values key → process name, port, entry point and the secrets it reads. The port is the
default PORT of services/<name>/src/main.ts; the entry point is the compiled main of that package.
*/}}
{{- define "message-bus.components" -}}
auth:
  name: auth
  port: 8081
  entry: services/auth/dist/main.js
  needs: [postgres, redis, signingKeys]
gateway:
  name: gateway
  port: 8082
  entry: services/gateway/dist/main.js
  needs: [postgres, redis, kafka, signingKeys]
pullApi:
  name: pull-api
  port: 8083
  entry: services/pull-api/dist/main.js
  needs: [postgres, redis, kafka, receiptHandles, signingKeys]
delivery:
  name: delivery
  port: 8084
  entry: services/delivery/dist/main.js
  # V8's semi-spaces capped: libs/testing BUS_NODE_FLAGS says why (docs/operations.md, "V8's young generation in delivery").
  nodeOptions: --max-semi-space-size=16
  needs: [postgres, kafka]
catalogue:
  name: catalogue
  port: 8091
  entry: services/catalogue/dist/main.js
  needs: [redis]
portal:
  name: portal
  port: 8092
  entry: services/portal/dist/main.js
  needs: [postgres, redis, kafka, operator, signingKeys, portalSignIn]
{{- end -}}

{{/* Name of one component's objects: <fullname>-<component>. Call with (dict "root" $ "component" "pull-api"). */}}
{{- define "message-bus.componentName" -}}
{{- printf "%s-%s" (include "message-bus.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "message-bus.componentSelectorLabels" -}}
{{ include "message-bus.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "message-bus.componentLabels" -}}
{{ include "message-bus.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "message-bus.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "message-bus.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "message-bus.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "message-bus.configMapName" -}}
{{- printf "%s-config" (include "message-bus.fullname" .) -}}
{{- end -}}

{{/* The chart's own Secret (values given inline). */}}
{{- define "message-bus.secretName" -}}
{{- include "message-bus.fullname" . -}}
{{- end -}}

{{/*
Where each secret variable comes from: a list of {env, secret, key, managed}, managed = the chart
keeps the value in its own Secret. Call with the root context and a dependency name.
*/}}
{{- define "message-bus.secretRefs" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $own := include "message-bus.secretName" $root -}}
{{- $refs := list -}}
{{- if eq .dep "postgres" -}}
{{- $refs = append $refs (dict "env" "DATABASE_URL" "secret" (default $own $v.postgres.existingSecret) "key" (ternary $v.postgres.existingSecretKey "DATABASE_URL" (ne $v.postgres.existingSecret "")) "managed" (eq $v.postgres.existingSecret "") "value" $v.postgres.url) -}}
{{- else if eq .dep "redis" -}}
{{- $refs = append $refs (dict "env" "REDIS_URL" "secret" (default $own $v.redis.existingSecret) "key" (ternary $v.redis.existingSecretKey "REDIS_URL" (ne $v.redis.existingSecret "")) "managed" (eq $v.redis.existingSecret "") "value" $v.redis.url) -}}
{{- else if eq .dep "kafka" -}}
{{- $refs = append $refs (dict "env" "KAFKA_BROKERS" "secret" (default $own $v.kafka.existingSecret) "key" (ternary $v.kafka.existingSecretKey "KAFKA_BROKERS" (ne $v.kafka.existingSecret "")) "managed" (eq $v.kafka.existingSecret "") "value" $v.kafka.brokers) -}}
{{- else if eq .dep "signingKeys" -}}
{{- $refs = append $refs (dict "env" "SIGNING_KEY_ENCRYPTION_KEY" "secret" (default $own $v.signingKeys.existingSecret) "key" (ternary $v.signingKeys.existingSecretKey "SIGNING_KEY_ENCRYPTION_KEY" (ne $v.signingKeys.existingSecret "")) "managed" (eq $v.signingKeys.existingSecret "") "value" $v.signingKeys.encryptionKey) -}}
{{- else if eq .dep "receiptHandles" -}}
{{- $refs = append $refs (dict "env" "RECEIPT_HANDLE_KEY" "secret" (default $own $v.receiptHandles.existingSecret) "key" (ternary $v.receiptHandles.existingSecretKey "RECEIPT_HANDLE_KEY" (ne $v.receiptHandles.existingSecret "")) "managed" (eq $v.receiptHandles.existingSecret "") "value" $v.receiptHandles.key) -}}
{{- else if eq .dep "operator" -}}
{{- $refs = append $refs (dict "env" "OPERATOR_CLIENT_ID" "secret" (default $own $v.operator.existingSecret) "key" (ternary $v.operator.clientIdKey "OPERATOR_CLIENT_ID" (ne $v.operator.existingSecret "")) "managed" (eq $v.operator.existingSecret "") "value" $v.operator.clientId) -}}
{{- $refs = append $refs (dict "env" "OPERATOR_CLIENT_SECRET" "secret" (default $own $v.operator.existingSecret) "key" (ternary $v.operator.clientSecretKey "OPERATOR_CLIENT_SECRET" (ne $v.operator.existingSecret "")) "managed" (eq $v.operator.existingSecret "") "value" $v.operator.clientSecret) -}}
{{- else if and (eq .dep "portalSignIn") $v.portalSignIn.issuer -}}
{{- $refs = append $refs (dict "env" "PORTAL_OIDC_CLIENT_SECRET" "secret" (default $own $v.portalSignIn.existingSecret) "key" (ternary $v.portalSignIn.existingSecretKey "PORTAL_OIDC_CLIENT_SECRET" (ne $v.portalSignIn.existingSecret "")) "managed" (eq $v.portalSignIn.existingSecret "") "value" $v.portalSignIn.clientSecret) -}}
{{- end -}}
{{- toYaml (dict "refs" $refs) -}}
{{- end -}}

{{/* env entries (secretKeyRef) for a list of dependencies; secretName overrides the chart's own Secret (the hook uses its own). */}}
{{- define "message-bus.secretEnv" -}}
{{- $root := .root -}}
{{- $override := default "" .ownSecret -}}
{{- range $dep := .deps }}
{{- range $ref := (fromYaml (include "message-bus.secretRefs" (dict "root" $root "dep" $dep))).refs }}
- name: {{ $ref.env }}
  valueFrom:
    secretKeyRef:
      name: {{ ternary (default $ref.secret $override) $ref.secret $ref.managed }}
      key: {{ $ref.key }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Every managed secret value: key → value, for the chart's Secret(s). */}}
{{- define "message-bus.managedSecretData" -}}
{{- $root := .root -}}
{{- range $dep := .deps }}
{{- range $ref := (fromYaml (include "message-bus.secretRefs" (dict "root" $root "dep" $dep))).refs }}
{{- if $ref.managed }}
{{ $ref.key }}: {{ $ref.value | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Dependencies the enabled components read. */}}
{{- define "message-bus.enabledDeps" -}}
{{- $deps := list -}}
{{- range $key, $c := fromYaml (include "message-bus.components" .) -}}
{{- if (index $.Values $key).enabled -}}
{{- range $c.needs -}}
{{- $deps = append $deps . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "deps" ($deps | uniq | sortAlpha)) -}}
{{- end -}}

{{/* Ingress TLS secret of a host: the value given, or <fullname>-<bus|portal>-tls. */}}
{{- define "message-bus.tlsSecretName" -}}
{{- $host := index .root.Values.ingress .which -}}
{{- default (printf "%s-%s-tls" (include "message-bus.fullname" .root) .which) $host.tls.secretName -}}
{{- end -}}

{{/*
Checks across values that the JSON schema cannot express, one message per problem (as Bitnami charts
do): rendering stops with every problem listed.
*/}}
{{- define "message-bus.validateValues" -}}
{{- $messages := list -}}
{{- $v := .Values -}}
{{- $deps := (fromYaml (include "message-bus.enabledDeps" .)).deps -}}
{{- if and (has "postgres" $deps) (not $v.postgres.url) (not $v.postgres.existingSecret) -}}
{{- $messages = append $messages "postgres: set postgres.url (DATABASE_URL) or postgres.existingSecret" -}}
{{- end -}}
{{- if and (has "redis" $deps) (not $v.redis.url) (not $v.redis.existingSecret) -}}
{{- $messages = append $messages "redis: set redis.url (REDIS_URL) or redis.existingSecret" -}}
{{- end -}}
{{- if and (or (has "kafka" $deps) $v.migrations.enabled) (not $v.kafka.brokers) (not $v.kafka.existingSecret) -}}
{{- $messages = append $messages "kafka: set kafka.brokers (KAFKA_BROKERS) or kafka.existingSecret" -}}
{{- end -}}
{{- if and (has "signingKeys" $deps) (not $v.signingKeys.encryptionKey) (not $v.signingKeys.existingSecret) -}}
{{- $messages = append $messages "signingKeys: set signingKeys.encryptionKey (SIGNING_KEY_ENCRYPTION_KEY) or signingKeys.existingSecret" -}}
{{- end -}}
{{- if and (has "signingKeys" $deps) $v.signingKeys.encryptionKey (not $v.signingKeys.existingSecret) (ne (len (b64dec $v.signingKeys.encryptionKey)) 32) -}}
{{- $messages = append $messages "signingKeys.encryptionKey: must be base64 of exactly 32 bytes (openssl rand -base64 32)" -}}
{{- end -}}
{{- if and (has "receiptHandles" $deps) (not $v.receiptHandles.key) (not $v.receiptHandles.existingSecret) -}}
{{- $messages = append $messages "receiptHandles: set receiptHandles.key (RECEIPT_HANDLE_KEY) or receiptHandles.existingSecret" -}}
{{- end -}}
{{- if and (has "receiptHandles" $deps) $v.receiptHandles.key (not $v.receiptHandles.existingSecret) (lt (len (b64dec $v.receiptHandles.key)) 32) -}}
{{- $messages = append $messages "receiptHandles.key: must be base64 of at least 32 bytes (openssl rand -base64 32)" -}}
{{- end -}}
{{- if and (has "operator" $deps) (not $v.operator.existingSecret) (or (not $v.operator.clientId) (not $v.operator.clientSecret)) -}}
{{- $messages = append $messages "operator: set operator.clientId and operator.clientSecret, or operator.existingSecret" -}}
{{- end -}}
{{- if and $v.portal.enabled $v.portalSignIn.issuer -}}
{{- if not $v.portalSignIn.clientId -}}
{{- $messages = append $messages "portalSignIn.clientId: required when portalSignIn.issuer is set (PORTAL_OIDC_CLIENT_ID)" -}}
{{- end -}}
{{- if and (not $v.portalSignIn.clientSecret) (not $v.portalSignIn.existingSecret) -}}
{{- $messages = append $messages "portalSignIn: set portalSignIn.clientSecret (PORTAL_OIDC_CLIENT_SECRET) or portalSignIn.existingSecret" -}}
{{- end -}}
{{- if and (not $v.portalSignIn.redirectUrl) (not (and $v.ingress.enabled $v.ingress.portal.host)) -}}
{{- $messages = append $messages "portalSignIn.redirectUrl: required when the portal has no ingress host (https://<portal host>/portal/callback)" -}}
{{- end -}}
{{- end -}}
{{- if not $v.busBaseUrl -}}
{{- $messages = append $messages "busBaseUrl: set the public base URL of the bus (BUS_BASE_URL), e.g. https://bus.sandbox.example.com" -}}
{{- end -}}
{{- if and $v.ingress.enabled $v.busBaseUrl $v.ingress.bus.host -}}
{{- $u := urlParse $v.busBaseUrl -}}
{{- if ne $u.host $v.ingress.bus.host -}}
{{- $messages = append $messages (printf "busBaseUrl: its host %q must be ingress.bus.host %q (tokens name the base URL they were issued at)" $u.host $v.ingress.bus.host) -}}
{{- end -}}
{{- if and $v.ingress.bus.tls.enabled (ne $u.scheme "https") -}}
{{- $messages = append $messages "busBaseUrl: must be https:// when the bus ingress has TLS" -}}
{{- end -}}
{{- end -}}
{{- if $v.ingress.enabled -}}
{{- if not $v.ingress.bus.host -}}
{{- $messages = append $messages "ingress.bus.host: required when ingress.enabled" -}}
{{- end -}}
{{- if not $v.ingress.portal.host -}}
{{- $messages = append $messages "ingress.portal.host: required when ingress.enabled" -}}
{{- end -}}
{{- if and $v.ingress.bus.host (eq $v.ingress.bus.host $v.ingress.portal.host) -}}
{{- $messages = append $messages "ingress: the bus and portal hosts must differ (both serve paths under /)" -}}
{{- end -}}
{{- range $key := list "auth" "gateway" "pullApi" "catalogue" "portal" -}}
{{- if not (index $v $key).enabled -}}
{{- $messages = append $messages (printf "%s.enabled: the ingress routes to %s; enable it or disable the ingress" $key $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $v.tests.enabled (not $v.gateway.enabled) -}}
{{- $messages = append $messages "tests.enabled: the helm test calls the gateway; enable gateway or disable tests" -}}
{{- end -}}
{{- $partitions := int $v.kafka.messagesPartitions -}}
{{- if gt (int $v.delivery.replicaCount) $partitions -}}
{{- $messages = append $messages (printf "delivery.replicaCount: %d is more than kafka.messagesPartitions (%d); extra consumers would sit idle" (int $v.delivery.replicaCount) $partitions) -}}
{{- end -}}
{{- if and $v.delivery.autoscaling.enabled (gt (int $v.delivery.autoscaling.maxReplicas) $partitions) -}}
{{- $messages = append $messages (printf "delivery.autoscaling.maxReplicas: %d is more than kafka.messagesPartitions (%d); delivery scales with partitions" (int $v.delivery.autoscaling.maxReplicas) $partitions) -}}
{{- end -}}
{{- range $key, $c := fromYaml (include "message-bus.components" .) -}}
{{- $a := (index $v $key).autoscaling -}}
{{- if and $a.enabled (gt (int $a.minReplicas) (int $a.maxReplicas)) -}}
{{- $messages = append $messages (printf "%s.autoscaling: minReplicas (%d) is more than maxReplicas (%d)" $key (int $a.minReplicas) (int $a.maxReplicas)) -}}
{{- end -}}
{{- end -}}
{{- if and $v.otel.enabled (not $v.otel.endpoint) -}}
{{- $messages = append $messages "otel.endpoint: required when otel.enabled (OTEL_EXPORTER_OTLP_ENDPOINT)" -}}
{{- end -}}
{{- if $messages -}}
{{- printf "\nVALUES VALIDATION:\n  - %s" (join "\n  - " $messages) | fail -}}
{{- end -}}
{{- end -}}

{{/* The replicas a component runs with at least: the HPA's minimum or the fixed count. */}}
{{- define "message-bus.minReplicas" -}}
{{- $c := .values -}}
{{- if $c.autoscaling.enabled -}}{{ $c.autoscaling.minReplicas }}{{- else -}}{{ $c.replicaCount }}{{- end -}}
{{- end -}}
