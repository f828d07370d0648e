"""Custom search attributes Lazarus registers and sets on every job workflow.

The dev stack registers them with ``temporal server start-dev --search-attribute NAME=TYPE``;
production registers them with ``temporal operator search-attribute create`` (see docs/operator-guide.md).
"""

from __future__ import annotations

# name -> Temporal type (as the CLI spells it)
SEARCH_ATTRIBUTES: dict[str, str] = {
    "LazarusCluster": "Keyword",
    "SlurmJobId": "Int",
    "SlurmUser": "Keyword",
    "SlurmPartition": "Keyword",
    "RecoveryState": "Keyword",
    "RecoveryMode": "Keyword",
    "LastSignature": "Keyword",
    "ImplicatedNodes": "KeywordList",
    "AttemptIndex": "Int",
    "AdviceGeneration": "Int",
}
