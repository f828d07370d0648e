{{/* Pieces shared by every worker pod. Call with (list $ "<role>"). */}}

{{/* The readiness check: a TCP connection to the Temporal frontend, with the image's own Python. */}}
{{- define "lazarus.readinessProbe" -}}
{{- $root := index . 0 -}}
{{- $address := $root.Values.temporal.address -}}
{{- $port := splitList ":" $address | last -}}
{{- $host := trimSuffix (printf ":%s" $port) $address | trimPrefix "[" | trimSuffix "]" -}}
exec:
  command:
    - python
    - -c
    - import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
    - {{ $host | quote }}
    - {{ $port | quote }}
periodSeconds: {{ $root.Values.readinessProbe.periodSeconds }}
timeoutSeconds: {{ $root.Values.readinessProbe.timeoutSeconds }}
failureThreshold: {{ $root.Values.readinessProbe.failureThreshold }}
{{- end -}}

{{- define "lazarus.workerEnv" -}}
{{- $root := index . 0 -}}
{{- $role := index . 1 -}}
- name: LAZARUS_CONFIG
  value: {{ printf "%s/lazarus.yaml" (include "lazarus.configDir" $root) }}
# For the `temporal` CLI and temporalio's envconfig inside the pod (kubectl exec); Lazarus
# itself reads the same values from lazarus.yaml.
- name: TEMPORAL_ADDRESS
  value: {{ $root.Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ $root.Values.temporal.namespace | quote }}
# The root file system is read-only; HOME on the /tmp emptyDir gives libraries a writable home.
- name: HOME
  value: /tmp
{{- with $root.Values.temporal.apiKeySecret.name }}
- name: LAZARUS_TEMPORAL__API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $root.Values.temporal.apiKeySecret.key }}
{{- end }}
{{- with (index $root.Values.workers $role).extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "lazarus.mountsSsh" -}}
{{- $root := index . 0 -}}
{{- if and (eq $root.Values.scheduler.transport "ssh") (index $root.Values.workers (index . 1)).mountSsh -}}true{{- end -}}
{{- end -}}

{{- define "lazarus.workerVolumeMounts" -}}
{{- $root := index . 0 -}}
{{- $role := index . 1 -}}
- name: config
  mountPath: {{ include "lazarus.configDir" $root }}
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if include "lazarus.mountsSsh" . }}
- name: ssh-key
  mountPath: {{ include "lazarus.sshDir" $root }}/key
  readOnly: true
- name: known-hosts
  mountPath: {{ include "lazarus.sshDir" $root }}/known_hosts
  readOnly: true
{{- end }}
{{- if $root.Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: {{ include "lazarus.tlsDir" $root }}
  readOnly: true
{{- end }}
{{- with (index $root.Values.workers $role).extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "lazarus.workerVolumes" -}}
{{- $root := index . 0 -}}
{{- $role := index . 1 -}}
- name: config
  configMap:
    name: {{ include "lazarus.fullname" $root }}-config
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if include "lazarus.mountsSsh" . }}
- name: ssh-key
  secret:
    secretName: {{ $root.Values.scheduler.ssh.keySecret.name }}
    # 0440 with the pod's fsGroup: readable by the worker, by nobody else.
    defaultMode: 0440
- name: known-hosts
  configMap:
    name: {{ include "lazarus.knownHostsConfigMap" $root }}
{{- end }}
{{- if $root.Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ $root.Values.temporal.tls.secretName }}
    defaultMode: 0440
{{- end }}
{{- with (index $root.Values.workers $role).extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}
