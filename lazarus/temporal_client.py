"""Connecting to Temporal with the project's data converter, with a clear error when it is unreachable."""

from __future__ import annotations

import re
from pathlib import Path

from temporalio.client import Client, TLSConfig
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import Runtime

from lazarus.config import Settings
from lazarus.errors import ConfigError, LazarusError
from lazarus.identity import CallerHeaders, caller_of, client_identity


class TemporalUnreachable(LazarusError):
    """Temporal cannot be reached at the configured address."""


async def connect(settings: Settings, runtime: Runtime | None = None) -> Client:
    """A client of the configured Temporal; ``runtime`` (a worker's, with its metrics exporter) or the SDK's default.

    The client identifies itself by the caller (:func:`lazarus.identity.caller_of`: the mTLS certificate's
    subject CN, else the OS user) and sends that identity with every message in the ``lazarus-caller`` header.
    """
    t = settings.temporal
    caller = caller_of(settings)
    tls: TLSConfig | bool = False
    if t.tls:
        tls = TLSConfig(
            server_root_ca_cert=_read(t.tls_server_ca, "temporal.tls_server_ca"),
            client_cert=_read(t.tls_client_cert, "temporal.tls_client_cert"),
            client_private_key=_read(t.tls_client_key, "temporal.tls_client_key"),
        )
    try:
        return await Client.connect(
            t.address,
            namespace=t.namespace,
            tls=tls,
            api_key=t.api_key,
            data_converter=pydantic_data_converter,
            runtime=runtime,
            identity=client_identity(caller),
            interceptors=[CallerHeaders(caller)],
        )
    except RuntimeError as exc:
        raise TemporalUnreachable(
            f"cannot reach Temporal at {t.address} (namespace {t.namespace}): {_reason(exc)}. "
            "Is the server running? (`lazarus dev status` for the embedded stack)"
        ) from None


def _reason(exc: RuntimeError) -> str:
    """The operating system's own words from the SDK's nested transport error ("Connection refused"),
    else the error as the SDK words it."""
    found = re.findall(r'message: "([^"]+)"', str(exc))
    return found[-1].lower() if found else str(exc)


def _read(path: Path | None, field: str) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{field}: cannot read {path}: {exc.strerror or exc}") from None
