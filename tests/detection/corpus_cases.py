"""Loading and running the labelled corpus in ``tests/detection/corpus/``.

Each YAML file holds one signature family::

    family: xid_fatal
    cases:
      - name: what the case shows
        layout: {nodes: "node[1-4]", tasks_per_node: 2}   # optional; this is the default
        log: |
          ...lines...
        expect: {kind: crash, category: hardware, advice: retry_excluding_nodes,
                 nodes: [node3], signature: xid_79_fallen_off_bus}

``files: {name: text}`` replaces ``log`` for a failure spread over several
files (the job's output plus each node's kernel log); the files are fed in
the order given. ``layout: null`` runs a case without a rank layout. ``noise: false`` turns off
the benign training output the runner puts around every log (realistic: a
failure is always surrounded by healthy progress lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lazarus.detection.engine import Analyzer
from lazarus.detection.layout import RankLayout
from lazarus.models.diagnosis import Diagnosis

CORPUS = Path(__file__).parent / "corpus"
DEFAULT_LAYOUT = {"nodes": "node[1-4]", "tasks_per_node": 2}

NOISE_BEFORE = [
    "0: SLURM_JOB_ID=81234",
    "node1:4101:4101 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
    "node1:4101:4101 [0] NCCL INFO cudaDriverVersion 12040",
    "node1:4101:4150 [0] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7",
    "0: [2024-05-01 11:59:00] iteration      100/  100000 | consumed samples:        12800 | elapsed time per "
    "iteration (ms): 1234.5 | learning rate: 3.000E-04 | global batch size:   128 | lm loss: 2.345678E+00 | "
    "loss scale: 1.0 | grad norm: 0.512 | number of skipped iterations:   0 | number of nan iterations:   0 |",
    "0: [2024-05-01 11:59:30] iteration      110/  100000 | consumed samples:        14080 | elapsed time per "
    "iteration (ms): 1230.1 | learning rate: 3.000E-04 | global batch size:   128 | lm loss: 2.301234E+00 | "
    "loss scale: 1.0 | grad norm: 0.498 | number of skipped iterations:   0 | number of nan iterations:   0 |",
]
NOISE_AFTER = ["srun: error: node1: task 0: Exited with exit code 1"]


@dataclass
class Case:
    family: str
    name: str
    expect: dict[str, Any]
    log: str = ""
    files: dict[str, str] = field(default_factory=dict)
    layout: dict[str, Any] | None = field(default_factory=lambda: dict(DEFAULT_LAYOUT))
    noise: bool = True

    @property
    def benign(self) -> bool:
        return self.expect.get("kind", "crash") == "none"

    def inputs(self) -> list[tuple[str, list[str]]]:
        """(file name, lines) pairs; healthy output is wrapped around the first file."""
        named = list(self.files.items()) or [(f"{self.family}.log", self.log)]
        inputs = [(name, text.splitlines()) for name, text in named]
        if self.noise:
            first_name, first = inputs[0]
            inputs[0] = (first_name, NOISE_BEFORE + first + ([] if self.benign else NOISE_AFTER))
        return inputs


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPUS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        for raw in data["cases"]:
            cases.append(Case(family=data["family"], **raw))
    return cases


def run_case(case: Case) -> Diagnosis:
    layout = None
    if case.layout is not None:
        layout = RankLayout.from_slurm(case.layout["nodes"], case.layout.get("tasks_per_node"))
    known = list(RankLayout.from_slurm(case.layout["nodes"]).nodes) if case.layout else None
    analyzer = Analyzer(layout=layout, known_nodes=known)
    for name, lines in case.inputs():
        for number, line in enumerate(lines, start=1):
            analyzer.feed(name, number, line)
    return analyzer.diagnosis()
