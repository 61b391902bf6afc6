{{- define "dev-deps.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: message-bus-dev-deps
{{- end }}

{{/* One dependency: a single-replica Deployment (Recreate: one writer of its emptyDir) and its Service.
     args: root, name, port, image, resources, env (list), command (list, optional), uid. */}}
{{- define "dev-deps.server" -}}
{{- $root := .root -}}
{{- $fullname := printf "%s-%s" $root.Release.Name .name -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dev-deps.labels" $root | nindent 4 }}
    app.kubernetes.io/name: {{ .name }}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app.kubernetes.io/instance: {{ $root.Release.Name }}, app.kubernetes.io/name: {{ .name }}}
  template:
    metadata:
      labels:
        {{- include "dev-deps.labels" $root | nindent 8 }}
        app.kubernetes.io/name: {{ .name }}
    spec:
      # KAFKA_* service-link variables would become broker properties; no dependency needs them.
      enableServiceLinks: false
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: {{ .uid }}
        runAsGroup: {{ .uid }}
        fsGroup: {{ .uid }}
        seccompProfile: {type: RuntimeDefault}
      containers:
        - name: {{ .name }}
          image: "{{ .image.repository }}:{{ .image.tag }}"
          imagePullPolicy: {{ .image.pullPolicy }}
          {{- with .command }}
          command: {{ toJson . }}
          {{- end }}
          {{- with .env }}
          env:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            - {name: server, containerPort: {{ .port }}, protocol: TCP}
          readinessProbe:
            tcpSocket: {port: server}
            periodSeconds: 2
            failureThreshold: 60
          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
          resources:
            {{- toYaml .resources | nindent 12 }}
          volumeMounts:
            - {name: data, mountPath: {{ .dataPath }}}
            - {name: tmp, mountPath: /tmp}
      volumes:
        - {name: data, emptyDir: {}}
        - {name: tmp, emptyDir: {}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dev-deps.labels" $root | nindent 4 }}
    app.kubernetes.io/name: {{ .name }}
spec:
  selector: {app.kubernetes.io/instance: {{ $root.Release.Name }}, app.kubernetes.io/name: {{ .name }}}
  ports:
    - {name: server, port: {{ .port }}, targetPort: server, protocol: TCP}
{{- end }}
