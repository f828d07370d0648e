"""File reads off the event loop, each awaited for a bounded time.

A log on NFS or FUSE can block a ``read`` for minutes, and the thread doing it
cannot be interrupted. The telemetry loop therefore reads every file in a
thread of a small pool and waits at most ``timeout`` for it. A read that takes
longer is left to finish on its own, its result dropped, and its file is not
read again until it has returned, so one stuck file holds one thread and costs
the loop one timeout, not one per cycle. When half the pool's threads are
stuck, new reads go to a fresh pool, so other jobs' files are still read.

A steady cycle at 10,000 jobs cannot afford a thread hop per file: :meth:`BoundedReads.run_each` runs many
reads one after the other in one thread, under one timeout. When time runs out, the reads it finished count,
the one it was on is stuck (as above), and the rest are left for the caller to read on their own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from lazarus.errors import LazarusError

T = TypeVar("T")


class LogReadStalledError(LazarusError):
    """A read did not return in time (or an earlier read of the same file still has not)."""


class BoundedReads:
    """Runs blocking reads in threads, at most one per key at a time, each awaited at most ``timeout`` seconds."""

    def __init__(self, timeout: float, threads: int = 4) -> None:
        self.timeout, self.threads = timeout, threads
        self._pool = self._new_pool()
        self._pool_stuck = 0
        self._stuck: dict[str, Future[Any]] = {}

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(self.threads, thread_name_prefix="lazarus-log-read")

    def stuck(self) -> list[str]:
        """Keys whose last read has not returned yet."""
        return [key for key, future in self._stuck.items() if not future.done()]

    async def run(self, key: str, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` in a thread; raises :class:`LogReadStalledError` when it (or ``key``'s last read) hangs."""
        earlier = self._stuck.get(key)
        if earlier is not None:
            if not earlier.done():
                raise LogReadStalledError(f"{key}: an earlier read has still not returned; not read again until it has")
            del self._stuck[key]
        future = self._pool.submit(fn, *args)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.timeout)
        except TimeoutError:
            self._stuck[key] = future
            self._pool_stuck += 1
            if self._pool_stuck * 2 >= self.threads:  # the stuck threads stay with the old pool
                self._pool.shutdown(wait=False)
                self._pool, self._pool_stuck = self._new_pool(), 0
            raise LogReadStalledError(
                f"{key}: a read did not return within {self.timeout:g} s (a blocking file system, or not a plain file)"
            ) from None

    async def run_each(self, reads: Mapping[str, Callable[[], T]]) -> dict[str, T]:
        """Every read of ``reads`` (key -> function) one after the other in one thread, all of them awaited at
        most ``timeout`` seconds; returns the results of those that finished in time. Keys whose last read is
        stuck are not read, nor those whose function raised; when time runs out, the read running then is stuck
        and the later ones are not run."""
        todo = {key: fn for key, fn in reads.items() if key not in self._stuck or self._stuck[key].done()}
        for key in todo:
            self._stuck.pop(key, None)
        done: dict[str, T] = {}
        lock, at, over = threading.Lock(), [""], threading.Event()

        def each() -> None:
            for key, fn in todo.items():
                if over.is_set():
                    return
                at[0] = key
                try:
                    result = fn()
                except Exception:  # left out: the caller's own read of it says what went wrong
                    continue
                with lock:
                    if over.is_set():
                        return
                    done[key] = result
            at[0] = ""

        future = self._pool.submit(each)
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.timeout)
        except TimeoutError:
            with lock:
                over.set()
                kept = dict(done)
            if at[0] and at[0] not in kept:
                self._stuck[at[0]] = future
                self._pool_stuck += 1
                if self._pool_stuck * 2 >= self.threads:
                    self._pool.shutdown(wait=False)
                    self._pool, self._pool_stuck = self._new_pool(), 0
            return kept
        return done

    def close(self) -> None:
        """Stop taking reads; threads still stuck are not waited for."""
        self._pool.shutdown(wait=False, cancel_futures=True)
