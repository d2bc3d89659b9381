{{/* Common labels of every object. */}}
{{- define "idstream.labels" -}}
app.kubernetes.io/name: idstream
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "ocr"). */}}
{{- define "idstream.selector" -}}
app.kubernetes.io/name: idstream
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "idstream.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "idstream.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "idstream.secretName" -}}
{{ .Values.existingSecret | default (printf "%s-idstream" .Release.Name) }}
{{- end -}}

{{/* Refuses more replicas than partitions: the extra members would get no partition. */}}
{{- define "idstream.checkReplicas" -}}
{{- if gt (int .replicas) (int .root.Values.partitions) -}}
{{- fail (printf "%s: %d replicas, more than the %d partitions of a topic (the others would idle)" .component (int .replicas) (int .root.Values.partitions)) -}}
{{- end -}}
{{- end -}}

{{/* The environment every idstream container gets. Secrets come by reference only. */}}
{{- define "idstream.env" -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: IDSTREAM_INSTANCE_ID
  value: $(POD_NAME)
- name: KAFKA_BROKERS
  value: {{ .Values.kafka.brokers | quote }}
{{- with .Values.kafka.schemaRegistryURL }}
- name: SCHEMA_REGISTRY_URL
  value: {{ . | quote }}
{{- end }}
- name: IDSTREAM_PARTITIONS
  value: {{ .Values.partitions | quote }}
- name: IDSTREAM_METRICS_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.metricsPort) | quote }}
- name: IDSTREAM_KAFKA_TLS
  value: {{ .Values.kafka.tls | quote }}
{{- if .Values.kafka.saslMechanism }}
- name: IDSTREAM_KAFKA_SASL_MECHANISM
  value: {{ .Values.kafka.saslMechanism | quote }}
- name: IDSTREAM_KAFKA_SASL_USER
  value: {{ .Values.kafka.saslUser | quote }}
- name: IDSTREAM_KAFKA_SASL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" . }}, key: kafka-sasl-password}}
{{- end }}
- name: IDSTREAM_TOKEN_SECRET
  valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" . }}, key: token-secret}}
- name: IDSTREAM_CLICKHOUSE_ADDR
  value: {{ .Values.clickhouse.addr | quote }}
- name: IDSTREAM_CLICKHOUSE_TLS
  value: {{ .Values.clickhouse.tls | quote }}
- name: IDSTREAM_BLOB_STORE
  value: {{ .Values.blobs.store | quote }}
- name: IDSTREAM_S3_ENDPOINT
  value: {{ .Values.blobs.s3Endpoint | quote }}
- name: IDSTREAM_S3_REGION
  value: {{ .Values.blobs.s3Region | quote }}
- name: IDSTREAM_S3_SSE
  value: {{ .Values.blobs.s3SSE | quote }}
{{- /* Optional: without keys, the pod's IAM role (a service account's web identity). */}}
- name: AWS_ACCESS_KEY_ID
  valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" . }}, key: s3-access-key, optional: true}}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" . }}, key: s3-secret-key, optional: true}}
{{- with .Values.tlsCASecret }}
{{- /* One CA bundle (key ca.pem) for the TLS connections that are on. */}}
{{- if $.Values.kafka.tls }}
- name: IDSTREAM_KAFKA_TLS_CA
  value: /etc/idstream/tls/ca.pem
{{- end }}
{{- if $.Values.clickhouse.tls }}
- name: IDSTREAM_CLICKHOUSE_TLS_CA
  value: /etc/idstream/tls/ca.pem
{{- end }}
- name: IDSTREAM_S3_TLS_CA
  value: /etc/idstream/tls/ca.pem
{{- end }}
- name: IDSTREAM_TOPIC_RETENTION
  value: {{ .Values.topicRetention | quote }}
- name: IDSTREAM_ERASURE_LAG
  value: {{ .Values.erasureLag | quote }}
- name: IDSTREAM_TENANTS
  value: /etc/idstream/tenants/tenants.yaml
{{- with .Values.registryURL }}
- name: IDSTREAM_REGISTRY_URL
  value: {{ . | quote }}
- name: IDSTREAM_REGISTRY_TOKEN
  valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" $ }}, key: registry-token, optional: true}}
{{- end }}
{{- if .Values.cscaConfigMap }}
- name: IDSTREAM_CSCA_DIR
  value: /etc/idstream/csca
{{- end }}
{{- end -}}

{{/* The pod spec of one component: (dict "root" $ "component" "ocr" "args" (list "process" "ocr") "resources" ... "clickhouse" bool "analyticsUser" string).
     clickhouse: the ClickHouse password (migrate and the ClickHouse sink); analyticsUser: the
     edge reads ClickHouse for the reviewers' analytics as this read-only user. */}}
{{- define "idstream.podSpec" -}}
{{- $root := .root -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  fsGroup: 65532
  seccompProfile: {type: RuntimeDefault}
containers:
  - name: {{ .component }}
    image: {{ include "idstream.image" $root }}
    imagePullPolicy: {{ $root.Values.image.pullPolicy }}
    args: {{ toJson .args }}
    env:
      {{- include "idstream.env" $root | nindent 6 }}
      {{- if .analyticsUser }}
      - name: IDSTREAM_EDGE_ANALYTICS
        value: "1"
      - name: IDSTREAM_CLICKHOUSE_USER
        value: {{ .analyticsUser | quote }}
      - name: IDSTREAM_CLICKHOUSE_PASSWORD
        valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" $root }}, key: clickhouse-analytics-password}}
      {{- else }}
      - name: IDSTREAM_CLICKHOUSE_USER
        value: {{ $root.Values.clickhouse.user | quote }}
      {{- end }}
      {{- if .clickhouse }}
      - name: IDSTREAM_CLICKHOUSE_PASSWORD
        valueFrom: {secretKeyRef: {name: {{ include "idstream.secretName" $root }}, key: clickhouse-password}}
      {{- end }}
      {{- with .extraEnv }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    ports:
      - {name: metrics, containerPort: {{ $root.Values.metricsPort }}}
      {{- with .port }}
      - {name: http, containerPort: {{ . }}}
      {{- end }}
    readinessProbe:
      httpGet: {path: /readyz, port: metrics}
      periodSeconds: 5
      failureThreshold: 3
    livenessProbe:
      httpGet: {path: /healthz, port: metrics}
      initialDelaySeconds: 30
      periodSeconds: 10
      failureThreshold: 6
    resources: {{ toJson .resources }}
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
    volumeMounts:
      - {name: data, mountPath: /var/lib/idstream}
      - {name: tmp, mountPath: /tmp}
      - {name: tenants, mountPath: /etc/idstream/tenants, readOnly: true}
      {{- if $root.Values.cscaConfigMap }}
      - {name: csca, mountPath: /etc/idstream/csca, readOnly: true}
      {{- end }}
      {{- if $root.Values.tlsCASecret }}
      - {name: tls-ca, mountPath: /etc/idstream/tls, readOnly: true}
      {{- end }}
volumes:
  - {name: data, emptyDir: {}}
  - {name: tmp, emptyDir: {}}
  - name: tenants
    secret:
      secretName: {{ include "idstream.secretName" $root }}
      items: [{key: tenants.yaml, path: tenants.yaml}]
  {{- if $root.Values.cscaConfigMap }}
  - name: csca
    configMap: {name: {{ $root.Values.cscaConfigMap }}}
  {{- end }}
  {{- with $root.Values.tlsCASecret }}
  - name: tls-ca
    secret: {secretName: {{ . }}, items: [{key: ca.pem, path: ca.pem}]}
  {{- end }}
{{- end -}}
