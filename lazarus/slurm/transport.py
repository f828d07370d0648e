"""Where Slurm commands run: one interface, a local and an SSH implementation.

A transport only runs an argv and reports what happened. It never interprets
Slurm's answer (that is :mod:`lazarus.slurm.outcome`), and it never retries a
command that may have started: a write such as ``requeuehold`` must not be
sent twice behind the caller's back. The caller's read-act-verify loop is what
makes a retry safe.
"""

from __future__ import annotations

import abc
import asyncio
import os
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from lazarus.slurm.errors import CommandNotFoundError, CommandTimeoutError


class CommandResult(BaseModel):
    """The outcome of one command: exit status and captured output."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    duration_s: float = Field(0.0, ge=0)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Transport(abc.ABC):
    """Runs Slurm client commands somewhere and returns their output."""

    @abc.abstractmethod
    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        """Run ``argv`` (already validated) with a wall-clock limit.

        Raises :class:`CommandTimeoutError` when the limit passes (the command
        is killed), :class:`CommandNotFoundError` when the program is missing,
        and transport-specific errors; a non-zero exit is *not* an error here.
        """

    async def close(self) -> None:  # noqa: B027 - a no-op by default: only some transports hold connections
        """Release connections; the transport may be used again afterwards (it reconnects)."""

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """Where commands run, for messages (``local`` or ``ssh root@host:22``)."""


class LocalTransport(Transport):
    """Runs commands as child processes of this worker, with ``SLURM_CONF`` set when configured."""

    def __init__(self, slurm_conf: Path | None = None) -> None:
        self._env = dict(os.environ)
        if slurm_conf is not None:
            self._env["SLURM_CONF"] = str(slurm_conf)

    @property
    def description(self) -> str:
        return "local"

    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
            )
        except FileNotFoundError:
            raise CommandNotFoundError(f"{argv[0]} is not installed or not on PATH on this host") from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            await _kill(proc)
            raise CommandTimeoutError(f"{' '.join(argv)} did not finish within {timeout:g} s and was killed") from None
        except asyncio.CancelledError:
            # A cancelled activity must not leave a scontrol behind that acts later.
            await _kill(proc)
            raise
        return CommandResult(
            argv=list(argv),
            returncode=proc.returncode if proc.returncode is not None else -1,
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            duration_s=time.monotonic() - started,
        )


async def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        await proc.wait()
