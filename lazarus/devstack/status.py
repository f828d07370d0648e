"""What ``dev status`` reports: each component up or down, with pid and port."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class ComponentStatus(BaseModel):
    name: str
    up: bool
    pid: int | None = None
    port: int | None = None


class StackStatus(BaseModel):
    cluster: str
    state_dir: Path
    slurm_conf: Path
    lazarus_config: Path
    temporal_address: str | None = None
    ui_url: str | None = None
    http_api_url: str | None = None  # Temporal's own HTTP API (docs/http-api.md)
    metrics_urls: list[str] = Field(default_factory=list, description="the workers' metrics endpoints")
    inbox_url: str | None = Field(None, description="the webhook inbox the workers' notices are posted to")
    notices_file: Path | None = Field(None, description="where the inbox keeps them, one JSON line each")
    components: list[ComponentStatus]

    @property
    def all_up(self) -> bool:
        return all(c.up for c in self.components)

    def render(self) -> str:
        lines = [f"cluster {self.cluster}, state in {self.state_dir}"]
        for c in self.components:
            where = f" port {c.port}" if c.port else ""
            pid = f" pid {c.pid}" if c.pid else ""
            lines.append(f"  {c.name:<14} {'up' if c.up else 'down':<5}{pid}{where}")
        if self.ui_url:
            lines.append(f"Temporal UI: {self.ui_url}")
        if self.http_api_url:
            lines.append(f"Temporal HTTP API: {self.http_api_url}")
        for url in self.metrics_urls:
            lines.append(f"metrics: {url}")
        if self.inbox_url:
            lines.append(f"notices: {self.inbox_url}, kept in {self.notices_file}")
        return "\n".join(lines)
