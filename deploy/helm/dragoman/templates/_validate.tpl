{{/* Refuses values that cannot work, with the reason: included by configmap.yaml, which every
release renders. */}}
{{- define "dragoman.validate" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString -}}
{{- if or (eq $tag "latest") (hasSuffix ":latest" .Values.image.repository) -}}
{{- fail "image.tag: \"latest\" is refused: name a version (default: the chart's appVersion), so that every pod of a release runs the same code" -}}
{{- end -}}
{{- include "dragoman.validateUrl" (dict "key" "database" "values" .Values.database "schemes" (list "postgresql" "postgres") "what" "PostgreSQL") -}}
{{- include "dragoman.validateUrl" (dict "key" "broker" "values" .Values.broker "schemes" (list "amqp" "amqps") "what" "RabbitMQ") -}}
{{- $mode := .Values.scaler.mode -}}
{{- if not (has $mode (list "builtin" "keda" "none")) -}}
{{- fail (printf "scaler.mode: %q is none of builtin, keda, none" $mode) -}}
{{- end -}}
{{- if and (eq $mode "keda") (not (or .Values.scaler.keda.managementUrl .Values.scaler.keda.existingSecret)) -}}
{{- fail "scaler.mode keda: set scaler.keda.managementUrl or scaler.keda.existingSecret (the RabbitMQ management API, http://user:password@rabbitmq:15672)" -}}
{{- end -}}
{{- range $pool := splitList " " (include "dragoman.pools" .) -}}
{{- include "dragoman.validatePool" (dict "pool" $pool "values" (index $.Values.workers $pool) "mode" $mode) -}}
{{- end -}}
{{- include "dragoman.validateVariables" (dict "where" "config" "variables" .Values.config) -}}
{{- range $pool := list "cpu" "gpu" -}}
{{- include "dragoman.validateVariables" (dict "where" (printf "workers.%s.env" $pool) "variables" (index $.Values.workers $pool).env) -}}
{{- end -}}
{{- include "dragoman.validateModels" .Values.models -}}
{{- end -}}

{{- define "dragoman.validateUrl" -}}
{{- $v := .values -}}
{{- if and $v.url $v.existingSecret -}}
{{- fail (printf "%s: set url or existingSecret, not both" .key) -}}
{{- end -}}
{{- if not (or $v.url $v.existingSecret) -}}
{{- fail (printf "%s: set %s.url or %s.existingSecret (with existingSecretKey): dragoman needs %s, and the chart bundles none" .key .key .key .what) -}}
{{- end -}}
{{- if $v.url -}}
{{- $scheme := (urlParse $v.url).scheme | splitList "+" | first -}}
{{- if not (has $scheme .schemes) -}}
{{- fail (printf "%s.url: a %s URL (%s://...) is needed" .key .what (first .schemes)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "dragoman.validatePool" -}}
{{- $w := .values -}}
{{- $where := printf "workers.%s" .pool -}}
{{- if lt (int $w.terminationGracePeriodSeconds) 300 -}}
{{- fail (printf "%s.terminationGracePeriodSeconds: %v is under 300: a worker told to stop finishes its batch first, and a shorter grace kills it halfway" $where $w.terminationGracePeriodSeconds) -}}
{{- end -}}
{{- $max := int (ternary $w.replicas $w.maxReplicas (eq .mode "none")) -}}
{{- $min := int (ternary $w.replicas $w.minReplicas (eq .mode "none")) -}}
{{- if or (lt $min 0) (gt $min $max) (and (eq .pool "cpu") (lt $max 1)) -}}
{{- fail (printf "%s: need 0 <= minReplicas <= maxReplicas, and at least one CPU worker (replicas with scaler.mode none)" $where) -}}
{{- end -}}
{{- end -}}

{{/* Settings given as variables: DRAGOMAN_* names, none that the chart sets itself. */}}
{{- define "dragoman.validateVariables" -}}
{{- $owned := list "DRAGOMAN_DATABASE_URL" "DRAGOMAN_BROKER_URL" "DRAGOMAN_MODELS_DIR" "DRAGOMAN_WORKER_HOST" "DRAGOMAN_CPU_MIN_WORKERS" "DRAGOMAN_CPU_MAX_WORKERS" "DRAGOMAN_GPU_MIN_WORKERS" "DRAGOMAN_GPU_MAX_WORKERS" -}}
{{- range $name, $_ := .variables -}}
{{- if not (regexMatch "^DRAGOMAN_[A-Z0-9_]+$" $name) -}}
{{- fail (printf "%s.%s: only DRAGOMAN_* settings go here" $.where $name) -}}
{{- end -}}
{{- if has $name $owned -}}
{{- fail (printf "%s.%s: set by the chart (database, broker, models.mountPath, workers.*)" $.where $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "dragoman.validateModels" -}}
{{- $p := .persistence -}}
{{- if and (not $p.existingClaim) (not $p.size) -}}
{{- fail "models.persistence: set existingClaim, or a size for the claim the chart makes" -}}
{{- end -}}
{{- $i := .install -}}
{{- if $i.enabled -}}
{{- if not (or $i.pairs $i.from) -}}
{{- fail "models.install: name pairs (from the index) or a file with from" -}}
{{- end -}}
{{- if and $i.from (not $i.sourceVolume) -}}
{{- fail "models.install.from: needs sourceVolume, the volume that holds the file (mounted at /source)" -}}
{{- end -}}
{{- if and $i.from (gt (len $i.pairs) 1) -}}
{{- fail "models.install.from installs one model (or one bundle): name at most one pair" -}}
{{- end -}}
{{- end -}}
{{- end -}}
