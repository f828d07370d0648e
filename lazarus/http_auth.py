"""Credentials and certificate checks for the HTTP services Lazarus queries (Prometheus, the attribution provider).

Certificates are always verified: against ``ca_file`` when one is set, else
against the system CAs. A bearer token comes from the settings (best through
the environment, e.g. ``LAZARUS_PROMETHEUS__BEARER_TOKEN``) or from a file;
basic auth from a file holding ``user:password``. Files are read when the
client is built. No token or password is ever put in a message or a log line:
errors name the file, never its content.
"""

from __future__ import annotations

import base64
import ssl
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from lazarus.config import HttpClientSettings
from lazarus.errors import ConfigError

_MAX_SECRET_BYTES = 64 * 1024


class HttpAuth(BaseModel):
    """What a client sends and checks: extra headers (secret) and the CA bundle to verify the server with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    headers: dict[str, SecretStr] = Field(default_factory=dict)
    ca_file: Path | None = None

    def header_values(self) -> dict[str, str]:
        """The headers with their secret values, for the HTTP client only."""
        return {name: value.get_secret_value() for name, value in self.headers.items()}

    @property
    def verify(self) -> str | bool:
        """``requests``' ``verify``: the CA bundle, or True (system CAs)."""
        return str(self.ca_file) if self.ca_file else True

    def ssl_context(self) -> ssl.SSLContext:
        """A verifying context for urllib."""
        return ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)


def _secret_file(path: Path, what: str) -> str:
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
    if len(raw) > _MAX_SECRET_BYTES:
        raise ConfigError(f"the {what} file {path} is larger than {_MAX_SECRET_BYTES // 1024} KiB")
    try:
        text = raw.decode().strip()
    except UnicodeDecodeError:
        raise ConfigError(f"the {what} file {path} is not UTF-8 text") from None
    if not text or "\n" in text:
        raise ConfigError(f"the {what} file {path} must hold exactly one non-empty line")
    return text


def read_secret_file(path: Path, what: str) -> str:
    """The one line of secret text in ``path`` (a token, a password, a secret URL); errors name the file only."""
    return _secret_file(path, what)


def http_auth(settings: HttpClientSettings, service: str) -> HttpAuth:
    """The credentials and CA bundle ``settings`` name; raises :class:`ConfigError` naming files, never secrets."""
    if settings.ca_file is not None and not settings.ca_file.is_file():
        raise ConfigError(f"the CA bundle {settings.ca_file} for {service} does not exist or is not a file")
    headers: dict[str, SecretStr] = {}
    if settings.bearer_token is not None:
        headers["Authorization"] = SecretStr(f"Bearer {settings.bearer_token.get_secret_value().strip()}")
    elif settings.bearer_token_file is not None:
        headers["Authorization"] = SecretStr(f"Bearer {_secret_file(settings.bearer_token_file, 'bearer token')}")
    elif settings.basic_auth_file is not None:
        pair = _secret_file(settings.basic_auth_file, "basic auth")
        if ":" not in pair:
            raise ConfigError(f"the basic auth file {settings.basic_auth_file} must hold user:password")
        headers["Authorization"] = SecretStr("Basic " + base64.b64encode(pair.encode()).decode())
    return HttpAuth(headers=headers, ca_file=settings.ca_file)
