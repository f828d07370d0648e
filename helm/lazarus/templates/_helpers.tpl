{{/* Names and labels, in the usual Helm shape. */}}
{{- define "lazarus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "lazarus.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "lazarus.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "lazarus.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lazarus.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "lazarus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (a worker role or the node agent). Call with (list $ "control"). */}}
{{- define "lazarus.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "lazarus.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "lazarus.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "lazarus.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "lazarus.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "lazarus.knownHostsConfigMap" -}}
{{- default (printf "%s-known-hosts" (include "lazarus.fullname" .)) .Values.scheduler.ssh.knownHostsConfigMap -}}
{{- end -}}

{{/* Where the chart mounts things; lazarus.yaml points at these paths. Disjoint directories: a
mount point nested inside a read-only ConfigMap volume could not be created. */}}
{{- define "lazarus.configDir" -}}/etc/lazarus/config{{- end -}}
{{- define "lazarus.sshDir" -}}/etc/lazarus/ssh{{- end -}}
{{- define "lazarus.tlsDir" -}}/etc/lazarus/temporal-tls{{- end -}}
