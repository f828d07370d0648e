"""The one configuration model for every Lazarus process.

Sources, highest priority first: keyword arguments, ``LAZARUS_*`` environment
variables (nested with ``__``, e.g. ``LAZARUS_TEMPORAL__ADDRESS``), the YAML
file named by ``LAZARUS_CONFIG`` (or passed to :func:`load_settings`, read by
pydantic-settings' own YAML source), then the defaults below. Unknown keys are rejected so a typo never silently falls
back to a default.

Nothing here is read at import time, not even the environment (every default
that depends on it is computed when the settings load): workflow code must never import this
module (the workflow sandbox re-imports modules, and configuration is I/O).
"""

from __future__ import annotations

import os
import stat
from contextvars import ContextVar
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    YamlConfigSettingsSource,
)

from lazarus.errors import ConfigError
from lazarus.models.ledger import LedgerPolicy
from lazarus.models.notify import NoticeKind
from lazarus.models.policy import Mode, Policy
from lazarus.models.spares import SparePool


def default_state_dir() -> Path:
    """Where `lazarus dev` keeps its state unless configured: ``$LAZARUS_STATE_DIR_DEFAULT``, read when called."""
    return Path(os.environ.get("LAZARUS_STATE_DIR_DEFAULT", "/var/tmp/lazarus-dev"))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TemporalSettings(_Strict):
    """How workers and the CLI reach Temporal."""

    address: str = Field(
        "127.0.0.1:17233",
        description="host:port of the Temporal frontend (gRPC)",
        json_schema_extra={"pattern": r"^.+:[0-9]{1,5}$"},  # _host_port, for the Helm chart's schema
    )
    namespace: str = Field("default", min_length=1, description="Temporal namespace holding Lazarus workflows")
    ui_url: str = Field("http://127.0.0.1:18233", description="Base URL of the Temporal Web UI, for links")
    tls: bool = Field(False, description="Connect with TLS")
    tls_client_cert: Path | None = Field(None, description="PEM client certificate for mTLS")
    tls_client_key: Path | None = Field(None, description="PEM client key for mTLS")
    tls_server_ca: Path | None = Field(None, description="PEM CA bundle to verify the server")
    api_key: str | None = Field(None, description="API key (Temporal Cloud)")

    @field_validator("address")
    @classmethod
    def _host_port(cls, v: str) -> str:
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"must be host:port, got {v!r}")
        return v

    @model_validator(mode="after")
    def _cert_pair(self) -> TemporalSettings:
        if (self.tls_client_cert is None) != (self.tls_client_key is None):
            raise ValueError("tls_client_cert and tls_client_key must be given together")
        return self


class TaskQueues(_Strict):
    """Task queue per worker role (see docs/architecture.md). Empty means the cluster's own queue,
    ``lazarus-<cluster>-<role>``, computed when the settings load: two clusters' workers sharing one
    Temporal namespace then never take each other's work (docs/deployment.md, several clusters)."""

    control: str = Field("", description="workflows and recovery decisions; empty: lazarus-<cluster>-control")
    scheduler: str = Field(
        "", description="Slurm actions (hold, exclude, release, drain); empty: lazarus-<cluster>-scheduler"
    )
    telemetry: str = Field(
        "", description="log tailing, Prometheus queries, node health; empty: lazarus-<cluster>-telemetry"
    )

    def for_cluster(self, cluster: str) -> TaskQueues:
        """These queues, each empty one named for ``cluster``: ``lazarus-<cluster>-<role>``."""
        return TaskQueues(
            **{role: getattr(self, role) or f"lazarus-{cluster}-{role}" for role in TaskQueues.model_fields}
        )


class SshSettings(_Strict):
    """SSH transport to a Slurm login node."""

    host: str = Field(..., description="login node host name or address")
    port: int = Field(22, ge=1, le=65535, description="SSH port of the login node")
    user: str = Field("root", min_length=1, description="remote user that runs Slurm commands")
    key_file: Path | None = Field(None, description="private key file; the SSH agent is used when unset")
    known_hosts: Path | None = Field(
        None, description="known_hosts file; host keys are always verified (~/.ssh/known_hosts when unset)"
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="seconds to wait for the SSH connection")


class SchedulerSettings(_Strict):
    """Where Slurm commands run."""

    transport: Literal["local", "ssh"] = Field(
        "local", description="local: run Slurm commands here; ssh: run them on a login node over SSH"
    )
    ssh: SshSettings | None = None
    slurm_conf: Path | None = Field(None, description="SLURM_CONF for the Slurm commands (local transport)")
    command_timeout_s: float = Field(30.0, gt=0, description="wall-clock limit for one Slurm command")

    @model_validator(mode="after")
    def _ssh_needs_host(self) -> SchedulerSettings:
        if self.transport == "ssh" and self.ssh is None:
            raise ValueError("transport 'ssh' needs an 'ssh' section with at least 'host'")
        return self


class TelemetryLeaseSettings(_Strict):
    """The lease that lets exactly one of several telemetry replicas run the loop (failover in ttl + renew_interval)."""

    ttl: timedelta = Field(
        timedelta(seconds=15),
        ge=timedelta(seconds=2),
        le=timedelta(minutes=10),
        description="a term lasts this long after its last renewal; a standby takes over once it has expired",
    )
    renew_interval: timedelta = Field(
        timedelta(seconds=5),
        gt=timedelta(0),
        description="the holder renews (and saves its log offsets) this often; a standby asks this often",
    )
    safety_margin: timedelta = Field(
        timedelta(seconds=3),
        gt=timedelta(0),
        description="the holder stops this long before its term would expire by its own clock, when it could "
        "not renew (covers a signal in flight and clock rate differences)",
    )

    @model_validator(mode="after")
    def _renews_in_time(self) -> TelemetryLeaseSettings:
        if self.renew_interval + self.safety_margin >= self.ttl:
            raise ValueError(
                "renew_interval + safety_margin must be shorter than ttl, or the holder loses its "
                "term between two renewals"
            )
        return self


class DiscoverySettings(_Strict):
    """The cluster-level discovery and telemetry loop."""

    interval: timedelta = Field(timedelta(seconds=1), gt=timedelta(0), description="one scheduler query per interval")
    log_tail_max_bytes: int = Field(4 << 20, gt=0, description="bytes read from one log per cycle at most")
    lease: TelemetryLeaseSettings = Field(
        default_factory=TelemetryLeaseSettings,
        description="several telemetry replicas may run: only the holder of the cluster's lease runs the loop",
    )
    job_name_prefix: str | None = Field(
        None,
        description="watch only opted-in jobs whose name starts with this (several Lazarus deployments, "
        "e.g. staging and production, sharing one cluster)",
    )
    log_roots: list[Path] = Field(
        default_factory=lambda: [Path(p) for p in DEFAULT_LOG_ROOTS],
        description="job output files are read only inside these directories (after resolving the file's "
        "directory; symbolic links, FIFOs and files not owned by the job's user are refused everywhere); "
        "an empty list allows any directory (see docs/security.md)",
    )
    log_read_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="one read of one job output file gets this long; a file that blocks "
        "longer (NFS, FUSE) is noted on the job and not read again until its read returns",
    )
    blind_after: timedelta = Field(
        timedelta(seconds=15),
        gt=timedelta(0),
        description="telemetry that has not seen a job (a fresh scheduler "
        "row and its logs read) for this long is blind to it: the hang watchdog records a blind spell and waits "
        "instead of deciding (at least three intervals)",
    )

    @model_validator(mode="after")
    def _blind_after_spans_cycles(self) -> DiscoverySettings:
        if self.blind_after < 3 * self.interval:
            raise ValueError(f"blind_after ({self.blind_after}) must be at least three intervals ({3 * self.interval})")
        return self

    @field_validator("log_roots")
    @classmethod
    def _absolute_roots(cls, v: list[Path]) -> list[Path]:
        relative = [str(p) for p in v if not p.is_absolute()]
        if relative:
            raise ValueError(f"log roots must be absolute paths, got {', '.join(relative)}")
        return v


# Where sites usually keep job output; the dev stack's and the tests' jobs write under /tmp or /var/tmp.
DEFAULT_LOG_ROOTS: tuple[str, ...] = ("/home", "/scratch", "/tmp", "/var/tmp")


class DevSettings(_Strict):
    """The embedded local stack behind `lazarus dev`."""

    state_dir: Path = Field(default_factory=default_state_dir, description="all state, logs and pid files live here")
    temporal_port: int = Field(17233, ge=1024, le=65535, description="Temporal dev server gRPC port")
    temporal_ui_port: int = Field(18233, ge=1024, le=65535, description="Temporal Web UI port")
    temporal_http_port: int = Field(
        17243, ge=1024, le=65535, description="Temporal's own HTTP API port (docs/http-api.md)"
    )
    slurmctld_port: int = Field(16817, ge=1024, le=65535, description="slurmctld port")
    slurmd_port0: int = Field(17001, ge=1024, le=65535, description="node i listens on slurmd_port0 + i - 1")
    slurmdbd_port: int = Field(16819, ge=1024, le=65535, description="slurmdbd port")
    mysql_port: int = Field(16306, ge=1024, le=65535, description="MariaDB port for Slurm accounting")
    metrics_port: int = Field(
        17464, ge=0, le=65535, description="the workers' Lazarus metrics (metrics.port of the stack's workers); 0: off"
    )
    temporal_metrics_port: int = Field(
        17465,
        ge=0,
        le=65535,
        description="the workers' Temporal SDK and workflow metrics (metrics.temporal_port); 0: off",
    )
    nodes: int = Field(4, ge=2, le=16, description="virtual Slurm nodes node1..nodeN")
    gpus_per_node: int = Field(4, ge=1, le=8, description="fake GPUs (gres) per node")
    cluster_name: str = Field("lazarus", pattern=r"^[a-z][a-z0-9_]{0,39}$", description="Slurm ClusterName")
    accounting: bool = Field(True, description="run slurmdbd + MariaDB so sacct works")
    workers: bool = Field(True, description="start the Lazarus workers with the stack")
    node_agents: bool = Field(
        True,
        description="with the workers, run one node agent per fake node on a fake NVML (built with gcc), so "
        "the node ledger can corroborate a drain with the node's own verdict",
    )
    node_agent_port0: int = Field(
        19401, ge=1024, le=65535, description="node i's agent listens on node_agent_port0 + i - 1"
    )
    inbox_port: int = Field(
        17480,
        ge=0,
        le=65535,
        description="the stack's webhook inbox: a loopback receiver the workers' notices go to, kept in "
        "<state_dir>/notices.jsonl; 0: no inbox and no webhook",
    )


class WorkerSettings(_Strict):
    """How a worker process stops."""

    graceful_shutdown: timedelta = Field(
        timedelta(seconds=30),
        ge=timedelta(0),
        description="on SIGTERM, running activities get this long to finish before they are cancelled;"
        " Kubernetes terminationGracePeriodSeconds must be longer (the Helm chart enforces it)",
    )


class AuthorizationSettings(_Strict):
    """Who may approve or reject advice, switch modes, drain or resume (docs/security.md)."""

    operators: list[str] = Field(
        default_factory=list,
        description="the callers permitted: OS user names, or mTLS client certificates' subject CNs (the "
        "identity the lazarus CLI sends with every message). Empty (the default): whoever may write to the "
        "Temporal namespace may, as the dev stack and demo expect; restrict the namespace on a production "
        "Temporal. Job workflows keep the list they started with; the node ledger takes it when the workers start",
    )

    @field_validator("operators")
    @classmethod
    def _named(cls, v: list[str]) -> list[str]:
        if any(not name.strip() for name in v):
            raise ValueError("an operator's name cannot be empty")
        return v


class MetricsSettings(_Strict):
    """Where a worker serves its metrics for Prometheus (docs/metrics.md lists them)."""

    port: int = Field(
        0,
        ge=0,
        le=65535,
        description="serve Lazarus's own metrics of this worker's roles at http://<address>:<port>/metrics; 0: off",
    )
    temporal_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="serve the Temporal SDK's metrics at http://<address>:<temporal_port>/metrics, with the "
        "metrics the workflows record (detections, advice, recoveries, drains: control role); 0: off",
    )
    address: str = Field(
        "0.0.0.0", min_length=1, description="address both metrics endpoints listen on (0.0.0.0: every interface)"
    )
    cluster_view_interval: timedelta = Field(
        timedelta(seconds=15),
        gt=timedelta(0),
        description="how often the telemetry role reads the cluster-wide gauges (advice waiting, node ledger, "
        "drain budget): one visibility count, one query per waiting advice, one ledger query, one node list",
    )

    def urls(self, host: str | None = None) -> list[str]:
        """The URLs of the endpoints turned on, as seen from ``host`` (default: the listen address)."""
        where = host or self.address
        where = f"[{where}]" if ":" in where else where
        return [f"http://{where}:{port}/metrics" for port in (self.port, self.temporal_port) if port]

    @model_validator(mode="after")
    def _two_ports(self) -> MetricsSettings:
        if self.port and self.port == self.temporal_port:
            raise ValueError(f"port and temporal_port must differ, both are {self.port}")
        return self


class LoggingSettings(_Strict):
    """What every Lazarus process logs, and how."""

    json_output: bool = Field(False, alias="json", description="one JSON object per line")
    level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="lowest level logged")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class HttpClientSettings(_Strict):
    """TLS verification and credentials for an HTTP(S) service Lazarus queries."""

    ca_file: Path | None = Field(
        None,
        description="PEM CA bundle that verifies the server's certificate (https); the system CAs when "
        "unset. Certificates are always verified",
    )
    bearer_token: SecretStr | None = Field(
        None,
        description="bearer token; better set through the environment (LAZARUS_<SECTION>__BEARER_TOKEN) "
        "or bearer_token_file than written here",
    )
    bearer_token_file: Path | None = Field(None, description="file holding the bearer token (read at each start)")
    basic_auth_file: Path | None = Field(None, description="file holding user:password for HTTP basic auth")

    @model_validator(mode="after")
    def _one_credential(self) -> HttpClientSettings:
        given = [n for n in ("bearer_token", "bearer_token_file", "basic_auth_file") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give at most one credential; got {' and '.join(given)}")
        return self


class PrometheusSettings(HttpClientSettings):
    """Where the telemetry worker reads training throughput (straggler detection) and node-agent health."""

    enabled: bool = Field(False, description="query Prometheus for stragglers and node health")
    straggler_interval: timedelta = Field(
        timedelta(seconds=60), gt=timedelta(0), description="one straggler query per interval"
    )
    straggler_window: timedelta = Field(timedelta(seconds=60), description="detector window (query step)")
    straggler_drop_fraction: float = Field(
        0.25, gt=0, lt=1, description="a node is a straggler when its throughput drops at least this much..."
    )
    straggler_windows: int = Field(3, ge=1, description="...for this many consecutive windows")

    url: str = Field("http://127.0.0.1:9090", pattern=r"^https?://", description="base URL of the Prometheus HTTP API")
    timeout_s: float = Field(5.0, gt=0, description="wall-clock limit for one query (no client retries)")
    throughput_metric: str = Field(
        "lazarus_rank_samples_per_second", description="gauge by job_id, node, rank (see docs/stragglers.md)"
    )


class NodeAgentSettings(_Strict):
    """Where the node ledger reads a node agent's verdict straight from its metrics endpoint, when Prometheus
    does not collect them (``prometheus.enabled`` wins). The verdict corroborates a drain: a job's own output
    alone never drains a node for everyone."""

    url_template: str | None = Field(
        None,
        pattern=r"^https?://.*\{node\}",
        description="metrics URL of any node's agent, {node} standing for "
        "the node name, e.g. http://{node}:9400/metrics; None: only the nodes listed in urls",
    )
    urls: dict[str, str] = Field(
        default_factory=dict,
        description="metrics URL of each listed node's agent, before url_template (the dev "
        "stack lists one port per node on 127.0.0.1)",
    )
    timeout_s: float = Field(2.0, gt=0, le=30, description="wall-clock limit for reading one agent")
    max_age: timedelta = Field(
        timedelta(minutes=5), gt=timedelta(0), description="a verdict from an older NVML poll counts as none"
    )
    liveness: bool = Field(
        True,
        description="telemetry asks the agents whether they answer: a node whose agent fell silent while the others "
        "answer, under a job whose progress stopped, is a node failure (lazarus/telemetry/liveness.py)",
    )
    liveness_interval: timedelta = Field(
        timedelta(seconds=1), ge=timedelta(milliseconds=200), description="how often each agent is asked"
    )
    liveness_silence: timedelta = Field(
        timedelta(seconds=5),
        ge=timedelta(seconds=2),
        description="an agent silent this long (having answered before) marks its node lost",
    )

    @field_validator("urls")
    @classmethod
    def _http_urls(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [node for node, url in v.items() if not url.startswith(("http://", "https://"))]
        if bad:
            raise ValueError(f"node agent URLs must start with http:// or https://; see {', '.join(sorted(bad)[:3])}")
        return v

    @property
    def configured(self) -> bool:
        return bool(self.url_template or self.urls)


class AttributionSettings(HttpClientSettings):
    """Optional external attribution provider (JSON over HTTP); the built-in rules are always the fallback."""

    provider_url: str | None = Field(
        None, pattern=r"^https?://", description="POST diagnosis + context here; None disables it"
    )
    timeout_s: float = Field(2.0, gt=0, le=30, description="the provider gets this long; then built-in rules apply")


class Webhook(HttpClientSettings):
    """One webhook that receives notices (docs/operator-guide.md, notifications)."""

    url: str | None = Field(None, pattern=r"^https?://", description="where notices are POSTed; give this or url_file")
    url_file: Path | None = Field(
        None, description="file holding the URL (read at each start): a Slack webhook URL is itself a secret"
    )
    format: Literal["json", "slack"] = Field(
        "json", description='json: the notice as one JSON object; slack: Slack-compatible {"text": ...}'
    )
    events: list[NoticeKind] = Field(
        default_factory=list, description="the kinds of notice this webhook receives; empty: every kind"
    )
    timeout_s: float = Field(5.0, gt=0, le=30, description="one POST gets this long")

    @model_validator(mode="after")
    def _one_url(self) -> Webhook:
        if (self.url is None) == (self.url_file is None):
            raise ValueError("give exactly one of url and url_file")
        return self


class NotificationSettings(_Strict):
    """Where Lazarus posts notices: advice awaiting approval, a job stopped or failed, a node drained or a
    drain refused by the budget. Each notice links to the workflow's history in the Temporal UI
    (``temporal.ui_url``). The scheduler role posts them."""

    webhooks: list[Webhook] = Field(default_factory=list, description="webhooks to post to; none: no notices")


class Settings(BaseSettings):
    """Lazarus configuration. See docs/configuration.md for every field."""

    model_config = SettingsConfigDict(
        env_prefix="LAZARUS_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    cluster: str = Field(
        "local", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$", description="cluster name in workflow ids"
    )
    mode: Mode = Field(Mode.MONITOR, description="cluster default: monitor (advise, wait for approval) or act")
    temporal: TemporalSettings = TemporalSettings()
    task_queues: TaskQueues = TaskQueues()
    scheduler: SchedulerSettings = SchedulerSettings()
    discovery: DiscoverySettings = DiscoverySettings()
    policies: dict[str, Policy] = Field(
        default_factory=lambda: {"default": Policy()},
        description="named recovery policies; a job picks one in its Slurm comment",
    )
    ledger: LedgerPolicy = LedgerPolicy()
    attribution: AttributionSettings = AttributionSettings()
    dev: DevSettings = Field(default_factory=DevSettings)  # built at load: its state_dir reads the environment
    logging: LoggingSettings = LoggingSettings()
    worker: WorkerSettings = WorkerSettings()
    prometheus: PrometheusSettings = PrometheusSettings()
    metrics: MetricsSettings = MetricsSettings()
    node_agents: NodeAgentSettings = NodeAgentSettings()
    notifications: NotificationSettings = NotificationSettings()
    authorization: AuthorizationSettings = AuthorizationSettings()

    @field_validator("policies")
    @classmethod
    def _has_default(cls, v: dict[str, Policy]) -> dict[str, Policy]:
        if "default" not in v:
            raise ValueError("a policy named 'default' is required")
        pools: dict[str, SparePool] = {}
        for name, policy in v.items():
            pool = policy.spares
            if pool is not None and pools.setdefault(pool.reservation, pool) != pool:
                raise ValueError(
                    f"policy {name!r} names spare pool {pool.reservation!r} differently from another policy"
                )
        return v

    def spare_pools(self) -> list[SparePool]:
        """The spare pools the policies name, one per reservation (the node ledger keeps them)."""
        pools = {p.spares.reservation: p.spares for p in self.policies.values() if p.spares is not None}
        return [pools[name] for name in sorted(pools)]

    @model_validator(mode="after")
    def _queues_per_cluster(self) -> Settings:
        """Task queues left empty are the cluster's own (computed here, at load, from ``cluster``)."""
        self.task_queues = self.task_queues.for_cluster(self.cluster)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlFile(settings_cls, yaml_file=_CONFIG_FILE.get()))


# The file :func:`load_settings` is loading; None while it loads none (or outside a load).
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("lazarus_config_file", default=None)


class _YamlFile(YamlConfigSettingsSource):
    """pydantic-settings' YAML source, below the environment, failing in one line that names the file."""

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            data = super()._read_file(file_path)
        except OSError as exc:
            raise ConfigError(f"cannot read configuration file {file_path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            problem = _describe_yaml_error(exc)
            raise ConfigError(f"configuration file {file_path} is not valid YAML: {problem}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"configuration file {file_path} must hold a mapping at the top level")
        return data


def _check_readable(path: Path) -> None:
    """Refuse a missing or unreadable file: pydantic-settings skips any path that is not a file silently."""
    try:
        path.open("rb").close()
    except FileNotFoundError:
        raise ConfigError(f"configuration file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc.strerror}") from None


def _check_trusted(path: Path) -> None:
    """Refuse a configuration file another user could have written or replaced.

    The file (and, when ``path`` is a link, the file it resolves to) must belong to root or to the
    current user and not be writable by every user; its directory must belong to root or to the
    current user and not be writable by every user, unless it has the sticky bit (as ``/tmp`` and
    ``/var/tmp`` do), which stops others from replacing a file they do not own.
    """
    me = os.geteuid()
    trusted = {0, me}
    for file in dict.fromkeys([Path(os.path.abspath(path)), Path(os.path.realpath(path))]):
        info, parent = file.stat(), file.parent.stat()
        if info.st_uid not in trusted:
            raise ConfigError(
                f"refusing configuration file {file}: it belongs to uid {info.st_uid}, not to root or to you (uid {me})"
            )
        if info.st_mode & stat.S_IWOTH:
            raise ConfigError(f"refusing configuration file {file}: every user may write it (chmod o-w {file})")
        if parent.st_uid not in trusted:
            raise ConfigError(
                f"refusing configuration file {file}: its directory {file.parent} belongs to uid "
                f"{parent.st_uid}, not to root or to you (uid {me}), so its owner could replace it"
            )
        if parent.st_mode & stat.S_IWOTH and not parent.st_mode & stat.S_ISVTX:
            raise ConfigError(
                f"refusing configuration file {file}: every user may write its directory "
                f"{file.parent}, so anyone could replace it (chmod o-w {file.parent})"
            )


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    """The parser's problem and 1-based position, without PyYAML's multi-line snippet."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return problem
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def format_validation_error(exc: ValidationError, source: str) -> str:
    """One line: each problem's field path and what is wrong, separated by semicolons."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see docs/configuration.md)"
        elif err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")  # pydantic's prefix says nothing to an operator
        lines.append(f"{where}: {msg}")
    return f"invalid configuration ({source}): " + "; ".join(lines)


def load_settings(path: Path | str | None = None, **overrides: Any) -> Settings:
    """Load and validate configuration, raising :class:`ConfigError` with a readable message."""
    path = path or os.environ.get("LAZARUS_CONFIG")
    if path:
        _check_readable(Path(path))
        _check_trusted(Path(path))
    source = f"file {path} and LAZARUS_* environment" if path else "LAZARUS_* environment"
    token = _CONFIG_FILE.set(Path(path) if path else None)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None
    except SettingsError as exc:
        # pydantic-settings raises this, not a ValidationError, when a LAZARUS_* variable
        # for a nested section holds malformed JSON (e.g. LAZARUS_TEMPORAL='{').
        raise ConfigError(
            f"invalid configuration ({source}): {exc}; a variable naming a whole section must hold JSON,"
            " or set one field with LAZARUS_<SECTION>__<FIELD>"
        ) from None
    finally:
        _CONFIG_FILE.reset(token)
