"""Mismatched collectives: ranks whose collective timeouts name different collectives ran different code.

Every rank of a process group must call the same collectives in the same order. When the watchdog's
timeout lines (``WorkNCCL(SeqNum=..., OpType=...)``) of one failure name two or more different
collective types, the ranks were waiting in different collectives: one rank took a code path the others
did not (a collective under a rank-dependent condition, a save or an evaluation run on one rank only).
That is a bug in the program, and a restart meets it again. PyTorch's own desync report
(``TORCH_NCCL_DESYNC_DEBUG``) calls this a collective mismatch. Ranks timing out in the *same* type of
collective at different sequence numbers say nothing of the kind (one rank may simply be slow or stuck),
so only the types are compared. The lines read are the root's evidence (its first lines), so a long log
whose first timeout lines all name one type is not judged.
"""

from __future__ import annotations

import re

from lazarus.detection.candidate import Candidate
from lazarus.detection.missing_rank import COLLECTIVE_TIMEOUT_FAMILIES

OP_TYPE = re.compile(r"\bOpType=(\w+)")


def mismatched_collectives(candidate: Candidate) -> list[str]:
    """The distinct collective types a collective-timeout candidate's lines name, when there are two or more."""
    if candidate.signature.family not in COLLECTIVE_TIMEOUT_FAMILIES:
        return []
    ops = sorted({m.group(1) for e in candidate.evidence if (m := OP_TYPE.search(e.text))})
    return ops if len(ops) >= 2 else []
