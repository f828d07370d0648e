"""Who sent a message to a workflow: the caller's identity, carried in a Temporal header.

The Lazarus client (CLI, workers) puts a :class:`Caller` in the header :data:`CALLER_HEADER` of every
signal, update and start it sends (``lazarus.identity``); the workflows read it back with their inbound
interceptor (``workflows.callers``) and check it against the operators the configuration permits
(``authorization.operators``, ``workflows.authorization``). The identity comes from the caller's
connection, never from a message's text: a message's ``operator`` field is only a note for people.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CALLER_HEADER = "lazarus-caller"
"""The Temporal header that carries the caller (a JSON payload of :class:`Caller`). Never change it."""


class Caller(BaseModel):
    """The identity of whoever sent a signal or update."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1, max_length=64, description="the user name, or the certificate's subject CN")
    source: Literal["os-user", "certificate"] = Field(
        "os-user", description="where the name came from: the client's OS user, or its mTLS client certificate"
    )

    def describe(self) -> str:
        """E.g. ``alice (certificate CN)`` or ``alice``."""
        return f"{self.name} (certificate CN)" if self.source == "certificate" else self.name


HANDLING: ContextVar[Caller | None] = ContextVar("lazarus_caller", default=None)
"""The caller of the signal or update a workflow is handling, set by its inbound interceptor
(``workflows.callers``). It lives here, in a module the workflow sandbox passes through, so the interceptor
(loaded by the worker) and the workflow code (loaded in the sandbox) share one variable."""
