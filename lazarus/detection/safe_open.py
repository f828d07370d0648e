"""Opening a job's output file without trusting the job's user.

A job's user chooses its output path and can replace the file while the job
runs: with a symbolic link to ``/etc/shadow``, a FIFO that blocks whoever opens
it, or a hard link to another user's file. Telemetry often runs as root, so
:func:`open_log` refuses, with one sentence saying why:

- a path outside the allowed roots (``discovery.log_roots``; the parent
  directory is resolved with ``realpath`` first, so ``/scratch/../etc`` is
  outside ``/scratch``);
- a symbolic link anywhere: every directory of the resolved parent is opened
  with ``O_NOFOLLOW`` from ``/`` down, so a directory swapped for a link after
  the check fails too, and the file itself is opened with ``O_NOFOLLOW``;
- anything but a regular file (checked with ``lstat`` before opening, and with
  ``fstat`` after; the open itself is ``O_NONBLOCK``, so a FIFO swapped in
  between never blocks);
- a file not owned by the job's user (``st_uid`` against the job's Slurm
  user id).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from lazarus.errors import LazarusError

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class LogRefusedError(LazarusError):
    """A log file that Lazarus will not read (the message says why); retrying will not help."""


class LogAccess(BaseModel):
    """Who may own a job's log files, and where they may be."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    roots: tuple[Path, ...] = Field((), description="allowed directories; empty: any directory")
    owner_uid: int | None = Field(None, description="the job's user id; None: the owner is not checked")


def _under(directory: str, roots: tuple[Path, ...]) -> bool:
    return any(
        directory == r or directory.startswith(r.rstrip("/") + "/") for r in (os.path.realpath(root) for root in roots)
    )


def _open_dir_nofollow(directory: str) -> int:
    """An ``O_PATH`` descriptor of ``directory`` (absolute, already resolved), no link followed on the way."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in Path(directory).parts[1:]:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_log(path: str, access: LogAccess) -> int:
    """A read-only descriptor of the regular file ``path``; raises :class:`LogRefusedError` or :class:`OSError`."""
    if not os.path.isabs(path):
        raise LogRefusedError(f"{path} is not an absolute path; Lazarus reads only absolute log paths")
    parent, name = os.path.split(path)
    resolved = os.path.realpath(parent)
    if access.roots and not _under(resolved, access.roots):
        raise LogRefusedError(
            f"{path} is outside the allowed log directories "
            f"({', '.join(str(r) for r in access.roots)}; discovery.log_roots)"
        )
    try:
        dir_fd = _open_dir_nofollow(resolved)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LogRefusedError(f"{path}: a directory on the way was replaced by a symbolic link") from None
        raise
    try:
        return _open_file(path, name, dir_fd, access)
    finally:
        os.close(dir_fd)


def _open_file(path: str, name: str, dir_fd: int, access: LogAccess) -> int:
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    _check_kind(path, before)
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LogRefusedError(f"{path} is a symbolic link; Lazarus does not follow links to logs") from None
        raise
    try:
        info = os.fstat(fd)
        _check_kind(path, info)
        if access.owner_uid is not None and info.st_uid != access.owner_uid:
            raise LogRefusedError(
                f"{path} belongs to uid {info.st_uid}, not to the job's user (uid {access.owner_uid})"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_kind(path: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise LogRefusedError(f"{path} is a symbolic link; Lazarus does not follow links to logs")
    if stat.S_ISFIFO(info.st_mode):
        raise LogRefusedError(f"{path} is a FIFO, not a regular file; Lazarus reads only regular files")
    if not stat.S_ISREG(info.st_mode):
        raise LogRefusedError(f"{path} is not a regular file; Lazarus reads only regular files")
