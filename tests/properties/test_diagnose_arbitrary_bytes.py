"""``lazarus diagnose`` of arbitrary bytes: never raises, always a valid Diagnosis, and text that
names no failure never yields recovery advice.

A job writes whatever it likes to its own log: invalid UTF-8, terminal
escapes, NUL bytes, lines far longer than the reader keeps, node lists that
expand to millions of names. The diagnosis is what a restart or a drain is
decided on, so it must be a well-formed :class:`Diagnosis` for any input.
"""

from __future__ import annotations

import itertools
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.cli.diagnose import render
from lazarus.detection.engine import EVIDENCE_TEXT_CHARS, MAX_NOTES, Analyzer, prefilter_for
from lazarus.detection.reader import MAX_LINE_BYTES, diagnose_files
from lazarus.hostlists import MAX_NAMES
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from tests.properties.strategies import HOSTILE_SNIPPETS

XID79 = b"May  1 12:00:03 node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."
FAILURE_LINES = (
    XID79,
    b"srun: error: Node failure on node[1-3]",
    b"3: RuntimeError: CUDA error: an illegal memory access was encountered",
    b"[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970",
    b"slurmstepd: error: *** JOB 7 ON node4 CANCELLED AT 2024-05-01T12:00:00 DUE TO NODE FAILURE ***",
)
HOSTILE_BYTES = (
    b"\x00",
    b"\xff\xfe",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\x1b[2J",
    b"\x1b]0;x\x07",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x85",
    "\u2028".encode(),
    b"\t",
    *(snippet.encode("utf-8", "surrogatepass") for snippet in HOSTILE_SNIPPETS),
)
chunks = st.one_of(st.binary(max_size=64), st.sampled_from(HOSTILE_BYTES), st.sampled_from(FAILURE_LINES))
logs = st.one_of(
    st.lists(chunks, max_size=30).map(b"".join),
    # one line longer than the reader keeps, with or without a newline and a failure after it
    st.tuples(st.binary(min_size=1, max_size=16), st.sampled_from([b"", b"\n", b"\n" + XID79])).map(
        lambda parts: parts[0] * (MAX_LINE_BYTES // len(parts[0]) + 2) + parts[1]
    ),
)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("logs")


def assert_valid(result: Diagnosis) -> None:
    """The Diagnosis contract, re-checked from its JSON as ``lazarus diagnose --json`` prints it."""
    again = Diagnosis.model_validate_json(result.model_dump_json())
    assert again == result
    assert result.failure_kind in FailureKind and result.category in Category
    assert 0.0 <= result.confidence <= 1.0
    assert result.retry_advice is None or result.retry_advice in RetryAdvice
    assert (result.failure_kind is FailureKind.NONE) == (result.retry_advice is None)
    assert all(len(evidence.text) <= EVIDENCE_TEXT_CHARS for evidence in result.evidence)
    assert len(result.notes) <= MAX_NOTES and len(result.implicated_nodes) <= MAX_NAMES
    assert isinstance(render(result), str)


_counter = itertools.count()


@given(st.lists(logs, min_size=1, max_size=3))
@example([b"\x00" * 10 + b"\n" + XID79 + b"\n\xff\xfe\x1b[2J"])
@example([b"x" * (MAX_LINE_BYTES * 3)])  # one long line and no newline at all
@example([b"srun: error: Node failure on " + b",".join(b"p%d[1-99999]" % i for i in range(40))])
def test_any_bytes_give_a_valid_diagnosis(log_dir, files):
    paths = []
    for content in files:
        path = log_dir / f"job-{next(_counter)}.out"
        path.write_bytes(content)
        paths.append(path)
    assert_valid(diagnose_files(paths))


@given(
    st.lists(
        st.one_of(
            st.text(), st.sampled_from(HOSTILE_SNIPPETS), st.sampled_from(FAILURE_LINES).map(lambda line: line.decode())
        ),
        max_size=20,
    )
)
def test_any_lines_fed_to_the_streaming_analyser_give_a_valid_diagnosis(lines):
    analyzer = Analyzer()
    for number, line in enumerate(lines, start=1):
        analyzer.feed("job.out", number, line)
    assert_valid(analyzer.diagnosis())


def test_a_line_naming_millions_of_nodes_is_diagnosed_in_bounded_memory(log_dir):
    path = log_dir / "hostile-hostlist.out"
    path.write_bytes(b"srun: error: Node failure on " + b",".join(b"p%d[1-99999]" % i for i in range(300)) + b"\n")
    tracemalloc.start()
    try:
        result = diagnose_files([path])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_valid(result)
    assert peak < 64 << 20


# Ordinary training chatter: lower-case words, numbers, progress lines. It names no failure.
benign_words = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789 .,/_-"), max_size=60)
benign_lines = st.one_of(
    benign_words,
    st.builds(
        lambda step, loss: f"LAZARUS step={step} loss={loss:.3f}",
        st.integers(0, 10**6),
        st.floats(0, 100, allow_nan=False),
    ),
    st.builds(lambda step: f"iteration {step}/ 100000 | lm loss: 2.5 | global batch size: 64 |", st.integers(0, 10**5)),
    st.builds(lambda rank, text: f"{rank}: INFO {text}", st.integers(0, 512), benign_words),
)


@given(st.lists(benign_lines, max_size=40))
def test_text_that_names_no_failure_never_yields_recovery_advice(lines):
    keywords = prefilter_for(Analyzer().catalogue).text
    lines = [line for line in lines if keywords.search(line) is None]  # keep lines no signature could match
    analyzer = Analyzer()
    for number, line in enumerate(lines, start=1):
        analyzer.feed("job.out", number, line)
    result = analyzer.diagnosis()
    assert_valid(result)
    assert result.failure_kind is FailureKind.NONE and result.retry_advice is None
    assert result.implicated_nodes == []
