"""A private munged: its own key and socket, so the system /etc/munge is never used.

munged refuses to start when its directories are writable by others or when
the socket directory lacks ``o+x``; the permissions below are the ones it
accepts. It runs as the ``munge`` user, like the packaged service.
"""

from __future__ import annotations

import os
import pwd
import shutil

from lazarus.devstack.component import Component, unix_socket_open
from lazarus.devstack.layout import Layout

MUNGE_USER = "munge"


def _prepare(layout: Layout) -> None:
    d = layout.munge
    d.mkdir(parents=True, exist_ok=True)
    user = pwd.getpwnam(MUNGE_USER)
    os.chown(d, user.pw_uid, user.pw_gid)
    os.chmod(d, 0o755)
    key = d / "munge.key"
    if not key.exists():
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))
    os.chown(key, user.pw_uid, user.pw_gid)
    os.chmod(key, 0o400)
    # A socket left by a killed munged makes the new one fail to bind.
    layout.munge_socket.unlink(missing_ok=True)


def munge_component(layout: Layout, env: dict[str, str]) -> Component:
    d = layout.munge
    return Component(
        name="munged",
        argv=[
            shutil.which("munged") or "/usr/sbin/munged",
            "--foreground",
            "--force",
            f"--socket={layout.munge_socket}",
            f"--key-file={d / 'munge.key'}",
            f"--pid-file={d / 'munged.pid'}",
            f"--seed-file={d / 'munged.seed'}",
            f"--log-file={d / 'munged.log'}",
        ],
        env=env,
        user=MUNGE_USER,
        ready=lambda: unix_socket_open(layout.munge_socket),
        prepare=lambda: _prepare(layout),
    )
