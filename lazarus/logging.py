"""Logging through loguru, with stdlib logging (temporalio, asyncssh, ...) intercepted.

Call :func:`setup_logging` once per process, at its edge (CLI entry, worker main).
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
from typing import Any

from loguru import logger

_STD_ATTRS = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class InterceptHandler(logging.Handler):
    """Forward stdlib log records to loguru, keeping extra attributes (temporalio's context)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level: str | int = logger.level(record.levelname).name
        except ValueError:
            level = record.levelno
        frame, depth = inspect.currentframe(), 0
        while frame and (depth == 0 or frame.f_code.co_filename == logging.__file__):
            frame = frame.f_back
            depth += 1
        extras = {k: v for k, v in vars(record).items() if k not in _STD_ATTRS}
        logger.bind(logger_name=record.name, **extras).opt(depth=depth, exception=record.exc_info).log(
            level, record.getMessage()
        )


def _json_sink(message: Any) -> None:
    record = message.record
    out = {
        "time": record["time"].isoformat(),
        "level": record["level"].name,
        "message": record["message"],
        "module": record["name"],
        "function": record["function"],
        "line": record["line"],
    }
    for key, value in record["extra"].items():
        out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
    if record["exception"] is not None:
        out["exception"] = "".join(__import__("traceback").format_exception(*record["exception"]))
    sys.stderr.write(json.dumps(out) + "\n")


def setup_logging(level: str = "INFO", json_output: bool = False) -> None:
    """Configure loguru as the only sink (stderr) and route stdlib logging into it."""
    logger.remove()
    if json_output:
        logger.add(_json_sink, level=level)
    else:
        logger.add(
            sys.stderr,
            level=level,
            format="<green>{time:HH:mm:ss.SSS}</green> <level>{level: <7}</level> {name}: {message}",
        )
    logging.basicConfig(handlers=[InterceptHandler()], level=logging.INFO, force=True)
    for noisy in ("asyncio", "asyncssh", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        from temporalio import activity, workflow

        activity.logger.activity_info_on_message = False
        workflow.logger.workflow_info_on_message = False
    except ImportError:  # pragma: no cover - temporalio is a hard dependency
        pass
