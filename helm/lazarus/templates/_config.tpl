{{/*
The lazarus.yaml every pod reads (LAZARUS_CONFIG). Built as a dict and rendered with toYaml so
that no value can break the YAML by quoting. Keys are lazarus/config.py::Settings field names;
tests/helm/test_rendered_config_loads.py proves load_settings accepts the result.
*/}}
{{- define "lazarus.config" -}}
{{- $v := .Values -}}
{{- $temporal := dict "address" $v.temporal.address "namespace" $v.temporal.namespace "tls" $v.temporal.tls.enabled -}}
{{- with $v.temporal.uiUrl }}{{ $_ := set $temporal "ui_url" . }}{{ end -}}
{{- if $v.temporal.tls.secretName -}}
{{- $_ := set $temporal "tls_client_cert" (printf "%s/tls.crt" (include "lazarus.tlsDir" .)) -}}
{{- $_ := set $temporal "tls_client_key" (printf "%s/tls.key" (include "lazarus.tlsDir" .)) -}}
{{- if $v.temporal.tls.useSecretCA -}}
{{- $_ := set $temporal "tls_server_ca" (printf "%s/ca.crt" (include "lazarus.tlsDir" .)) -}}
{{- end -}}
{{- end -}}
{{- $scheduler := dict "transport" $v.scheduler.transport "command_timeout_s" $v.scheduler.commandTimeoutSeconds -}}
{{- with $v.scheduler.slurmConf }}{{ $_ := set $scheduler "slurm_conf" . }}{{ end -}}
{{- if eq $v.scheduler.transport "ssh" -}}
{{- $s := $v.scheduler.ssh -}}
{{- $_ := set $scheduler "ssh" (dict
      "host" $s.host
      "port" $s.port
      "user" $s.user
      "connect_timeout_s" $s.connectTimeoutSeconds
      "key_file" (printf "%s/key/%s" (include "lazarus.sshDir" .) $s.keySecret.key)
      "known_hosts" (printf "%s/known_hosts/known_hosts" (include "lazarus.sshDir" .))) -}}
{{- end -}}
{{- $discovery := dict "interval" $v.discovery.intervalSeconds "log_tail_max_bytes" $v.discovery.logTailMaxBytes -}}
{{- with $v.discovery.jobNamePrefix }}{{ $_ := set $discovery "job_name_prefix" . }}{{ end -}}
{{- $_ := set $discovery "log_roots" $v.discovery.logRoots -}}
{{- $_ := set $discovery "log_read_timeout_s" $v.discovery.logReadTimeoutSeconds -}}
{{- $lease := $v.discovery.lease -}}
{{- $_ := set $discovery "lease" (dict "ttl" $lease.ttlSeconds "renew_interval" $lease.renewIntervalSeconds
      "safety_margin" $lease.safetyMarginSeconds) -}}
{{- $prom := dict "enabled" $v.prometheus.enabled "url" $v.prometheus.url "timeout_s" $v.prometheus.timeoutSeconds
      "straggler_interval" $v.prometheus.stragglerIntervalSeconds -}}
{{- $attribution := dict "timeout_s" $v.attribution.timeoutSeconds -}}
{{- with $v.attribution.providerUrl }}{{ $_ := set $attribution "provider_url" . }}{{ end -}}
{{- range $section := list (list $prom $v.prometheus) (list $attribution $v.attribution) -}}
{{- $out := index $section 0 -}}{{- $in := index $section 1 -}}
{{- with $in.caFile }}{{ $_ := set $out "ca_file" . }}{{ end -}}
{{- with $in.bearerTokenFile }}{{ $_ := set $out "bearer_token_file" . }}{{ end -}}
{{- with $in.basicAuthFile }}{{ $_ := set $out "basic_auth_file" . }}{{ end -}}
{{- end -}}
{{- $queues := dict -}}
{{- range $role, $queue := $v.taskQueues }}{{ with $queue }}{{ $_ := set $queues $role . }}{{ end }}{{ end -}}
{{- $ledger := dict "lemon_job_count" $v.ledger.lemonJobCount "lemon_window" $v.ledger.lemonWindowSeconds
      "max_drain_fraction" $v.ledger.maxDrainFraction
      "reconcile_interval" $v.ledger.reconcileIntervalSeconds "waiting_recheck" $v.ledger.waitingRecheckSeconds
      "max_implications" $v.ledger.maxImplications
      "corroborating_users" $v.ledger.corroboratingUsers -}}
{{- $metrics := dict "port" 0 "temporal_port" 0 -}}
{{- if $v.metrics.enabled -}}
{{- $metrics = dict "port" $v.metrics.port "temporal_port" $v.metrics.temporalPort
      "cluster_view_interval" $v.metrics.clusterViewIntervalSeconds -}}
{{- end -}}
{{- $config := dict
      "cluster" $v.cluster
      "mode" $v.mode
      "temporal" $temporal
      "task_queues" $queues
      "scheduler" $scheduler
      "discovery" $discovery
      "prometheus" $prom
      "attribution" $attribution
      "notifications" (dict "webhooks" $v.notifications.webhooks)
      "ledger" $ledger
      "policies" $v.policies
      "authorization" (dict "operators" $v.authorization.operators)
      "logging" (dict "json" $v.logging.json "level" $v.logging.level)
      "worker" (dict "graceful_shutdown" $v.worker.gracefulShutdownSeconds)
      "metrics" $metrics -}}
{{- toYaml $config -}}
{{- end -}}
