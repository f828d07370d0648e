"""The caller's identity on every message a Lazarus client sends to Temporal.

:func:`caller_of` says who is calling: the subject CN of the mTLS client certificate when
``temporal.tls`` names one, else the OS user running the process. :func:`connect`
(``lazarus.temporal_client``) gives it to Temporal as the client identity and installs
:class:`CallerHeaders`, which puts it in the ``lazarus-caller`` header of every start, signal and update,
where the workflows' inbound interceptor reads it (``workflows.callers``). A message's free-text
``operator`` is only a note: authorization and the record of who decided use this identity.
"""

from __future__ import annotations

import os
import pwd
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID
from temporalio.client import (
    Interceptor,
    OutboundInterceptor,
    SignalWorkflowInput,
    StartWorkflowInput,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    WorkflowHandle,
    WorkflowUpdateHandle,
)
from temporalio.contrib.pydantic import pydantic_data_converter

from lazarus.config import Settings
from lazarus.errors import ConfigError
from lazarus.models.callers import CALLER_HEADER, Caller


def caller_of(settings: Settings) -> Caller:
    """Who this process is to Temporal: the client certificate's subject CN under mTLS, else the OS user."""
    cert = settings.temporal.tls_client_cert if settings.temporal.tls else None
    if cert is not None:
        return Caller(name=certificate_cn(cert), source="certificate")
    return Caller(name=os_user(), source="os-user")


def os_user() -> str:
    """The name of the user this process runs as (its effective uid), never ``$USER`` or ``$LOGNAME``, which
    anyone may set; ``uid-<n>`` when the system has no name for it."""
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid-{uid}"


def certificate_cn(path: Path) -> str:
    """The subject common name of the PEM certificate at ``path``; a certificate without one is refused."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a PEM certificate"
        raise ConfigError(f"temporal.tls_client_cert: cannot read a certificate from {path}: {reason}") from None
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not str(names[0].value).strip():
        raise ConfigError(f"temporal.tls_client_cert: {path} has no subject CN to identify the caller by")
    return str(names[0].value)


def client_identity(caller: Caller) -> str:
    """Temporal's client identity (shown in the workflow's history next to each message and task): the SDK's
    own ``<pid>@<host>``, which tells worker processes apart (the dev stack finds its workers' pollers by it),
    then who: ``12345@vm1 alice``."""
    return f"{os.getpid()}@{socket.gethostname()} {caller.describe()}"


class CallerHeaders(Interceptor):
    """A client interceptor that adds the caller to every start, signal and update (header ``lazarus-caller``)."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Outbound(next, self.caller)


class _Outbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, caller: Caller) -> None:
        super().__init__(next)
        self._payload = pydantic_data_converter.payload_converter.to_payloads([caller])[0]

    def _with_caller(self, headers: Any) -> dict[str, Any]:
        return {**headers, CALLER_HEADER: self._payload}

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        return await super().start_workflow(replace(input, headers=self._with_caller(input.headers)))

    async def signal_workflow(self, input: SignalWorkflowInput) -> None:
        await super().signal_workflow(replace(input, headers=self._with_caller(input.headers)))

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle[Any]:
        return await super().start_workflow_update(replace(input, headers=self._with_caller(input.headers)))

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle[Any]:
        update = input.update_workflow_input
        input.update_workflow_input = replace(update, headers=self._with_caller(update.headers))
        return await super().start_update_with_start_workflow(input)
