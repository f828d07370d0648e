"""SSH transport: Slurm commands on a login node, over one reused asyncssh connection.

Why one connection: a new connection costs ~50-100 ms of handshake against
~4 ms per command on an open one. Why a channel limit: OpenSSH refuses more
than ``MaxSessions`` (default 10) concurrent channels per connection.

Host keys are always verified against ``known_hosts``; an unknown or changed
key is a :class:`HostKeyError` (non-retryable: retrying will not make an
untrusted server trustworthy). The remote side runs the command through the
user's shell, so argv is joined with :func:`shlex.join`; the values in it
were validated before (see :mod:`lazarus.slurm.validate`).
"""

from __future__ import annotations

import asyncio
import shlex
import time
from pathlib import Path

import asyncssh

from lazarus.config import SshSettings
from lazarus.slurm.errors import (
    AuthenticationError,
    CommandNotFoundError,
    CommandTimeoutError,
    HostKeyError,
    TransportError,
)
from lazarus.slurm.transport import CommandResult, Transport

# Below OpenSSH's default MaxSessions of 10.
MAX_CHANNELS = 8
# Shells report "command not found" with exit status 127.
_NOT_FOUND = 127


class SshTransport(Transport):
    """Runs commands on ``settings.host`` as ``settings.user``; reconnects when the connection is lost."""

    def __init__(self, settings: SshSettings, slurm_conf: Path | None = None) -> None:
        self._settings = settings
        self._slurm_conf = slurm_conf
        self._conn: asyncssh.SSHClientConnection | None = None
        self._connect_lock = asyncio.Lock()
        self._channels = asyncio.Semaphore(MAX_CHANNELS)

    @property
    def description(self) -> str:
        s = self._settings
        return f"ssh {s.user}@{s.host}:{s.port}"

    def _command(self, argv: list[str]) -> str:
        if self._slurm_conf is not None:
            argv = ["env", f"SLURM_CONF={self._slurm_conf}", *argv]
        return shlex.join(argv)

    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        started = time.monotonic()
        async with self._channels:
            process = await self._open_channel(argv)
            try:
                completed = await process.wait(check=False, timeout=timeout)
            except asyncssh.TimeoutError:
                process.close()
                raise CommandTimeoutError(
                    f"{' '.join(argv)} did not finish within {timeout:g} s on {self.description}"
                ) from None
            except (asyncssh.Error, OSError) as exc:
                # The command may have run: do not resend it, let the caller re-read state.
                await self._drop()
                raise TransportError(f"connection to {self.description} lost while running {argv[0]}: {exc}") from None
        status = completed.exit_status if completed.exit_status is not None else -1
        if status == _NOT_FOUND:
            raise CommandNotFoundError(f"{argv[0]} is not installed or not on PATH on {self.description}")
        return CommandResult(
            argv=list(argv),
            returncode=status,
            stdout=_text(completed.stdout),
            stderr=_text(completed.stderr),
            duration_s=time.monotonic() - started,
        )

    async def _open_channel(self, argv: list[str]) -> asyncssh.SSHClientProcess[str]:
        """Open a session channel, reconnecting once if the cached connection turned out to be dead.

        Retrying here is safe: a channel that failed to open has not started the command.
        """
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                return await conn.create_process(self._command(argv), stdin=asyncssh.DEVNULL)
            except (asyncssh.ChannelOpenError, asyncssh.ConnectionLost, asyncssh.DisconnectError, OSError) as exc:
                await self._drop()
                if attempt == 2:
                    raise TransportError(f"cannot open a session on {self.description}: {exc}") from None
        raise AssertionError("unreachable")

    async def _connection(self) -> asyncssh.SSHClientConnection:
        async with self._connect_lock:
            if self._conn is None or self._conn.is_closed():
                self._conn = await self._connect()
            return self._conn

    async def _connect(self) -> asyncssh.SSHClientConnection:
        s = self._settings
        known_hosts = s.known_hosts or Path.home() / ".ssh" / "known_hosts"
        if not known_hosts.is_file():
            raise HostKeyError(
                f"known_hosts file {known_hosts} does not exist, so the host key of {s.host} cannot be verified; "
                f"add it (ssh-keyscan -p {s.port} {s.host} >> {known_hosts}) after checking its fingerprint"
            )
        try:
            return await asyncssh.connect(
                s.host,
                port=s.port,
                username=s.user,
                client_keys=[str(s.key_file)] if s.key_file else (),
                known_hosts=str(known_hosts),
                connect_timeout=s.connect_timeout_s,
            )
        except asyncssh.HostKeyNotVerifiable as exc:
            raise HostKeyError(
                f"the host key of {s.host}:{s.port} is not trusted by {known_hosts} ({exc.reason}); "
                "verify the server and add its key"
            ) from None
        except asyncssh.PermissionDenied:
            raise AuthenticationError(f"{s.host}:{s.port} refused the SSH login of user {s.user!r}") from None
        except (TimeoutError, asyncssh.Error, OSError) as exc:
            raise TransportError(f"cannot connect to {self.description}: {exc or type(exc).__name__}") from None

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            await conn.wait_closed()


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")
