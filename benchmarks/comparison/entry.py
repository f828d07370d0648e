"""What every stack benchmark on the real cluster does around its runs (compare.py, restore.py): the run's
metadata, the report printed and saved as JSON, and the entry point (quiet logs, Ctrl-C or SIGTERM ends it
with status 2 after the stack is stopped)."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loguru import logger

Say = Callable[[str], None]


def run_meta(script: str, **extra: Any) -> dict[str, Any]:
    """The command, date and machine a benchmark's figures belong to."""
    return {
        "command": " ".join([script, *sys.argv[1:]]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores",
        **extra,
    }


def report(say: Say, table: str, result: dict[str, Any], path: Path | None) -> dict[str, Any]:
    """Print the table; write the JSON document to ``path`` when one was given."""
    say("")
    say(table)
    if path:
        path.write_text(json.dumps(result, indent=2, default=str))
        say(f"results written to {path}")
    return result


def run_benchmark(bench: Callable[[Say], Awaitable[Any]]) -> int:
    """Run ``bench`` with warnings only on stderr; 2 when interrupted (Ctrl-C, or SIGTERM turned into one)."""
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    try:
        asyncio.run(bench(lambda s: print(s, flush=True)))
    except KeyboardInterrupt:
        return 2
    return 0
