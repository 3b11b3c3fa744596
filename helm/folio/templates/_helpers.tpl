{{/* Names, labels and the pieces every workload shares. */}}

{{- define "folio.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-folio, or the release name when it already contains the chart name. At most 40
characters, so that suffixed names ("-controller-metrics") stay DNS labels. */}}
{{- define "folio.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "folio.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "folio.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: folio
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "ctx" $ "component" "api"). */}}
{{- define "folio.selectorLabels" -}}
app.kubernetes.io/name: {{ include "folio.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "folio.componentLabels" -}}
{{ include "folio.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* An image reference: (dict "ctx" $ "image" .Values.images.api). */}}
{{- define "folio.image" -}}
{{- $repo := .image.repository -}}
{{- with .ctx.Values.images.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $repo .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .ctx.Chart.AppVersion .image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "folio.imagePullSecrets" -}}
{{- with .Values.images.pullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The controller's leader-election Lease (controller/main.ts names it; one per namespace). */}}
{{- define "folio.leaseName" -}}
folio-controller
{{- end -}}

{{/* The restricted Pod Security Standard, pod level. */}}
{{- define "folio.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The restricted Pod Security Standard, container level. */}}
{{- define "folio.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The configuration both the API and the controller read (README "Configuration"). */}}
{{- define "folio.sharedEnv" -}}
{{- $c := .Values.config -}}
{{- $s3 := .Values.storage.s3 -}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: FOLIO_LOG_LEVEL
  value: {{ $c.logLevel | quote }}
- name: FOLIO_TMP_DIR
  value: /tmp
- name: HOME
  value: /tmp
- name: FOLIO_RATE_LIMIT_PER_MINUTE
  value: {{ $c.plans.business.rateLimitPerMinute | int64 | quote }}
- name: FOLIO_RATE_LIMIT_BURST
  value: {{ $c.plans.business.rateLimitBurst | int64 | quote }}
- name: FOLIO_MAX_UNFINISHED_JOBS
  value: {{ $c.plans.business.maxUnfinishedJobs | int64 | quote }}
- name: FOLIO_MAX_REQUEST_BYTES
  value: {{ $c.limits.maxRequestBytes | int64 | quote }}
- name: FOLIO_MAX_FILE_BYTES
  value: {{ $c.limits.maxFileBytes | int64 | quote }}
- name: FOLIO_MAX_PAGES
  value: {{ $c.limits.maxPages | int64 | quote }}
- name: FOLIO_MAX_MERGE_FILES
  value: {{ $c.limits.maxMergeFiles | int64 | quote }}
- name: FOLIO_MAX_IMAGE_PIXELS
  value: {{ $c.limits.maxImagePixels | int64 | quote }}
- name: FOLIO_JOB_TIMEOUT_MS
  value: {{ mul $c.limits.jobTimeoutSeconds 1000 | int64 | quote }}
- name: FOLIO_RETENTION_SECONDS
  value: {{ $c.retention.jobSeconds | int64 | quote }}
- name: FOLIO_UPLOAD_TTL_SECONDS
  value: {{ $c.retention.uploadSeconds | int64 | quote }}
- name: FOLIO_SWEEP_INTERVAL_MS
  value: {{ mul $c.retention.sweepIntervalSeconds 1000 | int64 | quote }}
- name: FOLIO_KEY_ROTATION_GRACE_SECONDS
  value: {{ $c.keyRotationGraceSeconds | int64 | quote }}
- name: FOLIO_ACCESS_REQUESTS_PER_HOUR
  value: {{ $c.accessRequestsPerHour | int64 | quote }}
- name: FOLIO_WEBHOOK_ALLOWED_HOSTS
  value: {{ join "," $c.webhooks.allowedHosts | quote }}
- name: FOLIO_S3_BUCKET
  value: {{ $s3.bucket | quote }}
- name: FOLIO_S3_REGION
  value: {{ $s3.region | quote }}
{{- with $s3.endpoint }}
- name: FOLIO_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: FOLIO_S3_FORCE_PATH_STYLE
  value: {{ $s3.forcePathStyle | quote }}
{{- with $s3.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $s3.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $s3.secretAccessKeyKey }}
{{- end }}
{{- with $c.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Pod-level scheduling fields of a component's values. */}}
{{- define "folio.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}
