"""What ``lazarus diagnose`` can soundly say about a log that ends in set-up or waiting output.

A hang often shows in a log only as its last lines before silence: NCCL
set-up (``NCCL INFO Channel ...``), ``Initializing distributed``, a barrier
waiting for ranks. In a finished file that is indistinguishable from
a healthy job cut off by whoever copied the log, or one still at work: the
file carries no clock. So ``diagnose`` does not call it a hang; it says that
the log ends in waiting output with no exit record after it, and that the live
path decides. There, telemetry tails the growing log and the hang watchdog
(``workflows/watchdog.py``) compares the time since the last progress line with
the job's learned hang budget: silence measured in seconds is what makes a hang. A report that carries its
own clock is different: Horovod's stall inspector says the ranks have waited
"for more than 60 seconds", a watchdog's no-progress report, and is a hang
finding (signature ``horovod_stall``), so this note is never reached for it.
"""

from __future__ import annotations

import re
from pathlib import Path

TAIL_BYTES = 4096
LINE_CHARS = 160

# Output printed while a job sets up its collectives or waits for its peers.
_WAITING = re.compile(
    r"NCCL INFO|Initializing distributed|[Ww]aiting (?:for|on)|stall_inspector|One or more tensors were submitted"
    r"|[Mm]issing ranks|[Rr]endezvous|init_process_group|[Bb]arrier"
)
# Anything that says the program ended, failed or finished.
_EXIT = re.compile(
    r"[Ee]xit(?:ed| code|code|ing)|Traceback|CANCELLED|Killed|Terminat|[Ff]inished|[Cc]ompleted"
    r"|[Ee]rror|FAILED|[Aa]bort"
)


def _last_lines(path: Path) -> list[str]:
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - TAIL_BYTES))
        text = handle.read(TAIL_BYTES).decode("utf-8", "replace")
    return [line for line in text.splitlines() if line.strip()]


def silence_note(path: Path) -> str | None:
    """A note when ``path`` ends in set-up or waiting output with no exit record in its last lines."""
    try:
        lines = _last_lines(path)
    except OSError:
        return None
    if not lines or _WAITING.search(lines[-1]) is None or any(_EXIT.search(line) for line in lines):
        return None
    last = lines[-1].strip()
    if len(last) > LINE_CHARS:
        last = last[: LINE_CHARS - 3] + "..."
    return (
        f"{path.name} ends in set-up or waiting output ({last!r}) with no exit record after it. If the job is "
        "still running and this file has stopped growing, it may be hung; a finished file cannot tell a hang "
        "from a job still at work, so no failure is claimed. The live path decides: the hang watchdog compares "
        "the time since the last progress line with the job's hang budget."
    )
