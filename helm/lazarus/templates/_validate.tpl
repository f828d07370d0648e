{{/*
Checks that span several values, which values.schema.json cannot express with a readable message.
Each failure is one sentence naming the values to fix; every template includes this, so `helm
template`, `helm install` and `helm lint` all stop on it.
*/}}
{{- define "lazarus.validate" -}}
{{- $v := .Values -}}
{{- if le (int $v.terminationGracePeriodSeconds) (int $v.worker.gracefulShutdownSeconds) -}}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be greater than worker.gracefulShutdownSeconds (%v), or Kubernetes kills workers in the middle of a Slurm action" $v.terminationGracePeriodSeconds $v.worker.gracefulShutdownSeconds) -}}
{{- end -}}
{{- if eq $v.scheduler.transport "ssh" -}}
{{- if not $v.scheduler.ssh.host -}}
{{- fail "scheduler.transport is ssh but scheduler.ssh.host is empty: set it to the Slurm login node" -}}
{{- end -}}
{{- if not $v.scheduler.ssh.keySecret.name -}}
{{- fail "scheduler.transport is ssh but scheduler.ssh.keySecret.name is empty: name the Secret that holds the private key" -}}
{{- end -}}
{{- if and (not $v.scheduler.ssh.knownHosts) (not $v.scheduler.ssh.knownHostsConfigMap) -}}
{{- fail "scheduler.transport is ssh but neither scheduler.ssh.knownHosts nor scheduler.ssh.knownHostsConfigMap is set: host keys are always verified" -}}
{{- end -}}
{{- end -}}
{{- if and $v.temporal.tls.secretName (not $v.temporal.tls.enabled) -}}
{{- fail "temporal.tls.secretName is set but temporal.tls.enabled is false: enable TLS or drop the secret" -}}
{{- end -}}
{{- if not (hasKey $v.policies "default") -}}
{{- fail "policies must contain a policy named default" -}}
{{- end -}}
{{- if not (or $v.workers.control.enabled $v.workers.scheduler.enabled $v.workers.telemetry.enabled) -}}
{{- fail "every worker role is disabled (workers.*.enabled): enable at least one" -}}
{{- end -}}
{{- end -}}
