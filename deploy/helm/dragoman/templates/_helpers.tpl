{{/* Names. Full names stop at 40 characters so that "-models-install" and the pools' suffixes
fit the 63 of a label value (a Job's name is one). */}}
{{- define "dragoman.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "dragoman.fullname" -}}
{{- $name := include "dragoman.name" . -}}
{{- if .Values.fullnameOverride -}}
{{- $name = .Values.fullnameOverride -}}
{{- else if not (contains $name .Release.Name) -}}
{{- $name = printf "%s-%s" .Release.Name $name -}}
{{- else -}}
{{- $name = .Release.Name -}}
{{- end -}}
{{- $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The Deployment of a pool's workers; call with (dict "root" $ "pool" "cpu"). */}}
{{- define "dragoman.workerName" -}}
{{- printf "%s-worker-%s" (include "dragoman.fullname" .root) .pool -}}
{{- end -}}

{{/* The pools that run: "cpu", or "cpu gpu". */}}
{{- define "dragoman.pools" -}}
{{- if .Values.workers.gpu.enabled }}cpu gpu{{ else }}cpu{{ end -}}
{{- end -}}

{{/* The RabbitMQ queue a pool's workers consume: <DRAGOMAN_QUEUE_PREFIX>.work.<pool>. */}}
{{- define "dragoman.workQueue" -}}
{{- printf "%s.work.%s" (get .root.Values.config "DRAGOMAN_QUEUE_PREFIX" | default "dragoman") .pool -}}
{{- end -}}

{{- define "dragoman.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "dragoman.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "dragoman.modelsClaim" -}}
{{- .Values.models.persistence.existingClaim | default (printf "%s-models" (include "dragoman.fullname" .)) -}}
{{- end -}}

{{- define "dragoman.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}

{{/* Labels. */}}
{{- define "dragoman.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dragoman
{{- end -}}

{{/* Call with (dict "root" $ "component" "worker" "pool" "cpu"); pool is optional. */}}
{{- define "dragoman.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dragoman.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- with .pool }}
dragoman.io/pool: {{ . }}
{{- end }}
{{- end -}}

{{- define "dragoman.componentLabels" -}}
{{ include "dragoman.labels" .root }}
{{ include "dragoman.selectorLabels" . }}
{{- end -}}

{{/* A pod's labels and annotations; call with (dict "root" $ "component" C "pool" P "port" N
"annotations" A). The checksums roll the pods when the settings change. */}}
{{- define "dragoman.podMetadata" -}}
labels:
  {{- include "dragoman.selectorLabels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
  checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
  {{- if .root.Values.metrics.annotations }}
  prometheus.io/scrape: "true"
  prometheus.io/port: {{ .port | quote }}
  prometheus.io/path: /metrics
  {{- end }}
  {{- with merge (dict) (.annotations | default dict) .root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* What every pod shares: pull secrets, the pod's security context, scheduling; call with
(dict "root" $ "values" <the component's values>). */}}
{{- define "dragoman.podCommon" -}}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The account of pods that never call the Kubernetes API. */}}
{{- define "dragoman.noApiAccount" -}}
automountServiceAccountToken: false
{{- with include "dragoman.serviceAccountName" . }}
serviceAccountName: {{ . }}
{{- end }}
{{- end -}}

{{- define "dragoman.containerCommon" -}}
image: {{ include "dragoman.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
{{- end -}}

{{/* The settings of the processes that use PostgreSQL and RabbitMQ. */}}
{{- define "dragoman.envFrom" -}}
- configMapRef:
    name: {{ include "dragoman.fullname" . }}
{{- with .Values.extraEnvFrom }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "dragoman.urlEnv" -}}
- name: DRAGOMAN_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret | default (include "dragoman.fullname" .) }}
      key: {{ ternary .Values.database.existingSecretKey "database-url" (not (empty .Values.database.existingSecret)) }}
- name: DRAGOMAN_BROKER_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.broker.existingSecret | default (include "dragoman.fullname" .) }}
      key: {{ ternary .Values.broker.existingSecretKey "broker-url" (not (empty .Values.broker.existingSecret)) }}
{{- end -}}

{{/* Writable scratch space under a read-only root filesystem: /tmp (uploads spooled by the
API, temporary files of the engines) and the home (the working directory, caches). */}}
{{- define "dragoman.scratchVolumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.scratch.sizeLimit }}
- name: home
  emptyDir:
    sizeLimit: {{ .Values.scratch.sizeLimit }}
{{- end -}}

{{- define "dragoman.scratchMounts" -}}
- name: tmp
  mountPath: /tmp
- name: home
  mountPath: {{ .Values.scratch.home }}
{{- end -}}

{{/* The models volume as the API and the workers see it: read-only. */}}
{{- define "dragoman.modelsVolume" -}}
- name: models
  persistentVolumeClaim:
    claimName: {{ include "dragoman.modelsClaim" . }}
    readOnly: true
{{- end -}}

{{- define "dragoman.modelsMount" -}}
- name: models
  mountPath: {{ .Values.models.mountPath }}
  readOnly: true
{{- end -}}

{{/* Probes on the container's "http" port. */}}
{{- define "dragoman.probe" -}}
httpGet:
  path: {{ .path }}
  port: http
periodSeconds: {{ .period | default 10 }}
timeoutSeconds: {{ .timeout | default 5 }}
failureThreshold: {{ .failures | default 3 }}
{{- end -}}
