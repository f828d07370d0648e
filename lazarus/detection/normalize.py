"""Line normalization before matching: strip the prefixes other tools put in front of a message.

The same NCCL or kernel message reaches Lazarus behind many prefixes: srun
``--label`` (``3: ``), mpirun ``--tag-output`` (``[1,3]<stdout>:``), torchrun
(``[rank3]:``), syslog (``May  1 12:00:00 node4 kernel:``), dmesg
(``[12345.678901]``, ``[  +0.000844]``, ``[Sat Oct 12 18:38:44 2024]``), ISO or
bracketed timestamps, Go's standard log time (``2020/08/10 19:09:42``), container or pod names (``worker-1 | ``, padded by docker
compose), vLLM's and SGLang's logger (``ERROR 11-18 18:07:28 engine.py:366] ``), the host a
parallel launcher names (pdsh/DeepSpeed ``node01: ``, ``10.0.0.3: ``), Ray actors
(``(RayWorker pid=12, ip=10.0.0.3) ``), TorchX roles (``[trainer0|0]:``),
PyTorch's own glog prefixes (``[E1030 03:19:32.58 ProcessGroupNCCL.cpp:1785] ``), and the
leading Markdown code marks (backticks) that a line pasted into an issue or a chat keeps.
:func:`normalize` removes them, repeatedly, so a pattern
anchored on the message itself (``^RuntimeError:``) matches whatever tool
wrapped the line. Locators still read the original line: prefixes are where the
node and the rank are named.

Xid reports are put in the driver's own form, so that one pattern per code
matches every way they are written (:func:`canonical_xid`): a bare ``Xid 149,
...`` or ``NVRM: Xid 13, ...`` without the device (as NVIDIA's catalogue, DCGM, health reports and
blog posts write it) becomes
``NVRM: Xid (?): 149, ...``, the Kubernetes device plugin's ``XidCriticalError: Xid=79 on Device=GPU-...,``
becomes ``NVRM: Xid (GPU-...): 79,``, and an Xid 45 that names its cause (``... caused by
previous Xid 149``) is read as that cause: Xid 45 is only the cleanup after
another error (NVIDIA's Xid 45 workflow), so the code it names is the finding.

Joining a message wrapped over indented lines is done by the file scanner
(:mod:`.reader`), which sees the lines that follow a keyword hit.
"""

from __future__ import annotations

import re

MAX_PREFIXES = 6

_PREFIX = re.compile(
    r"""^\s*(?:
      \d{1,6}:\s                                          # srun --label
    | \[\d+,\d+\]<(?:stdout|stderr)>:\s?                  # mpirun --tag-output
    | \[(?:rank|Rank|RANK)\s?\d+\]:?\s?                   # torchrun / accelerate rank prefix
    | \[default\d+\]:\s?                                  # torchrun --tee default prefix
    | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\s\d\d:\d\d:\d\d\s+[\w.-]+\s+
      (?:[\w./-]+(?:\[\d+\])?:\s)?                        # syslog: date host tag[pid]:
    | \[\s*\+?\d+\.\d+\]\s?                               # dmesg seconds since boot, dmesg -d deltas
    | \[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s\w{3}\s+\d{1,2}\s\d\d:\d\d:\d\d\s\d{4}\]\s?  # dmesg -T
    | (?:\d{1,3}\.){3}\d{1,3}:\s                          # pdsh / DeepSpeed launcher: host IP
    | [a-z][\w-]*\d(?:[\w-]|\.(?![A-Z]))*:\s(?=\S)          # pdsh / DeepSpeed launcher: host name with a digit
                                                          # (not a module path: urllib3.exceptions.X, etcd3.Y)
    | \([\w.]+\s+pid=\d+(?:,\s*ip=[\d.]+)?\)\s             # Ray actor or task
    | \[[A-Za-z_]+\d+(?:\|\d+)?\]:\s?                      # TorchX role replica
    | \[rank:\s?\d+\]:?\s?                                # Lightning rank prefix
    | \[[EWIF]\d{0,4}\s[\d:.\s]*[\w./-]+:\d+\]\s           # PyTorch c10 log prefix
    | \[?\d{4}-\d\d-\d\d[T\s]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s*  # ISO timestamp
    | \d\d:\d\d:\d\d(?:[.,]\d+)?\s+                       # bare time of day
    | \d{4}/\d\d/\d\d\s\d\d:\d\d:\d\d(?:\.\d+)?\s+          # Go's standard log (device plugin, operators)
    | [\w.-]{1,63}\s+\|\s                                 # docker compose / container name (padded)
    | (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s\d\d-\d\d\s\d\d:\d\d:\d\d(?:\.\d+)?\s[\w./-]+:\d+\]\s  # vLLM/SGLang logger
    | kernel:\s                                           # journal kernel tag left after the host
    | `{1,3}(?=\S)                                        # Markdown code marks left on a pasted line
    | (?:E|W|I|F)\d{4}\s\d\d:\d\d:\d\d\.\d+\s+\d+\s[\w./-]+:\d+\]\s  # glog (c10d) prefix
    )""",
    re.VERBOSE,
)


_BARE_XID = re.compile(r"^(?:NVRM: )?Xid (\d+),")
_DEVICE_PLUGIN_XID = re.compile(r"XidCriticalError: Xid=(\d+) on Device=([^,\s]+),?")
_XID_45_CAUSE = re.compile(r"NVRM: Xid (\([^)]*\)): 45\b(.*) caused by previous Xid (\d+)")


def canonical_xid(message: str) -> str:
    """``message`` with an Xid report in the driver's ``NVRM: Xid (PCI...): N,`` form (see the module doc)."""
    if message.startswith(("Xid ", "NVRM: Xid ")) and _BARE_XID.match(message):
        return _BARE_XID.sub(r"NVRM: Xid (?): \1,", message, count=1)
    if "XidCriticalError: Xid=" in message:
        return _DEVICE_PLUGIN_XID.sub(r"NVRM: Xid (\2): \1,", message, count=1)
    if "caused by previous Xid" in message:
        return _XID_45_CAUSE.sub(r"NVRM: Xid \1: \3, cleanup reported as Xid 45\2", message, count=1)
    return message


def normalize(line: str) -> str:
    """``line`` without the tool prefixes in front of its message (at most ``MAX_PREFIXES`` are stripped),
    an Xid report put in the driver's form."""
    for _ in range(MAX_PREFIXES):
        found = _PREFIX.match(line)
        if found is None or found.end() == 0:
            break
        line = line[found.end() :]
    return canonical_xid(line.strip())
