"""The workflows' inbound interceptor: who sent the signal or update being handled.

The Lazarus client puts a :class:`~lazarus.models.callers.Caller` in the ``lazarus-caller`` header of every
message (``lazarus.identity``). :class:`CallerInterceptor`, installed on every worker that runs Lazarus's
workflows (and on every replayer), reads it before a signal handler, an update validator or an update
handler runs; the handler asks :func:`current`. A message without the header, or with one that does not
decode, has no caller (None): where operators are configured it is refused (``workflows.authorization``).

The header is part of the message in the workflow's history, so a replay reads the same caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.worker import (
    HandleSignalInput,
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

with workflow.unsafe.imports_passed_through():
    from lazarus.models.callers import CALLER_HEADER, HANDLING, Caller

_current = HANDLING


def current() -> Caller | None:
    """The caller of the signal or update being handled; None outside one or when it named nobody."""
    return _current.get()


def _caller(headers: Mapping[str, Payload]) -> Caller | None:
    payload = headers.get(CALLER_HEADER)
    if payload is None:
        return None
    try:
        caller = workflow.payload_converter().from_payload(payload, Caller)
    except Exception:  # a malformed header names nobody: the message is treated as anonymous
        return None
    return caller if isinstance(caller, Caller) else None


class _Inbound(WorkflowInboundInterceptor):
    async def handle_signal(self, input: HandleSignalInput) -> None:
        token = _current.set(_caller(input.headers))
        try:
            await super().handle_signal(input)
        finally:
            _current.reset(token)

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        token = _current.set(_caller(input.headers))
        try:
            super().handle_update_validator(input)
        finally:
            _current.reset(token)

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        token = _current.set(_caller(input.headers))
        try:
            return await super().handle_update_handler(input)
        finally:
            _current.reset(token)


class CallerInterceptor(Interceptor):
    """Give every worker and replayer of Lazarus's workflows this interceptor (``interceptors=[...]``)."""

    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        return _Inbound
