"""Recognition that survives real formats: prefixes are stripped, wrapped lines are joined, a generic
layer answers when no signature does, and retry advice comes from one decision table."""

from __future__ import annotations

import pytest

from lazarus.detection.advice_table import advise
from lazarus.detection.normalize import normalize
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("3: RuntimeError: boom", "RuntimeError: boom"),
        ("[1,3]<stdout>:ValueError: bad", "ValueError: bad"),
        ("[rank12]: KeyError: 'x'", "KeyError: 'x'"),
        ("May  1 12:02:03 node4 kernel: [ 12.5] NVRM: Xid 79", "NVRM: Xid 79"),
        ("[12345.678901] nfs: server a not responding", "nfs: server a not responding"),
        ("2024-05-01T12:00:00.123Z worker-1 | OSError: gone", "OSError: gone"),
        ("[1,0]<stderr>:7: [rank7]: TypeError: t", "TypeError: t"),
    ],
)
def test_tool_prefixes_are_stripped_before_matching(line, message):
    assert normalize(line) == message


def test_a_line_without_a_prefix_is_left_as_is():
    assert normalize("NCCL WARN Cuda failure 'out of memory'") == "NCCL WARN Cuda failure 'out of memory'"


def test_a_prefixed_exception_is_recognised_by_its_type(tmp_path):
    result = diagnose_text(tmp_path, "[1,2]<stdout>:[rank2]: ModuleNotFoundError: No module named 'apex'\n")
    assert result.signature == "python_import_error"


def test_a_message_wrapped_over_indented_lines_is_matched_as_one(tmp_path):
    text = (
        "[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but\n"
        "               NVRM: this kernel module has the version 510.73.05.  Please\n"
    )
    result = diagnose_text(tmp_path, text)
    assert result.signature == "gpu_driver_mismatch"
    assert "510.73.05" in result.evidence[0].text


def test_traceback_frames_are_not_joined_to_the_line_before(tmp_path):
    text = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nKeyError: 'x'\n"
    result = diagnose_text(tmp_path, text)
    assert result.signature == "python_exception"
    assert result.evidence[0].line_no == 3


@pytest.mark.parametrize(
    ("text", "signature", "kind"),
    [
        (
            "Exception raised from checkTimeout at ProcessGroupNCCL.cpp:781 (most recent call first):\n",
            "generic_timeout_hang",
            FailureKind.HANG,
        ),
        (
            "NVRM: nvAssertFailedNoLog: Assertion failed: pKernelBus @ kern_bus.c:1421\n",
            "generic_kernel_error",
            FailureKind.CRASH,
        ),
        (
            "[ERROR] [launch.py:434:sigkill_handler] ['python', 'main.py'] exits with return code = -15\n",
            "generic_external_signal",
            FailureKind.CRASH,
        ),
        (
            "slurmstepd: error: container_g_join failed: 119383\n",
            "generic_scheduler_error",
            FailureKind.CRASH,
        ),
    ],
)
def test_the_generic_layer_answers_when_no_signature_matches(tmp_path, text, signature, kind):
    result = diagnose_text(tmp_path, text)
    assert (result.signature, result.failure_kind) == (signature, kind)
    assert result.implicated_nodes == []  # a generic answer never blames a node


def test_a_specific_signature_wins_over_the_generic_layer(tmp_path):
    text = (
        "Exception raised from checkTimeout at ProcessGroupNCCL.cpp:781 (most recent call first):\n"
        "3: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    )
    assert diagnose_text(tmp_path, text).signature == "cuda_oom"


@pytest.mark.parametrize(
    ("category", "node_evidence", "recurrence", "advice"),
    [
        (Category.HARDWARE, False, False, RetryAdvice.RETRY_EXCLUDING_NODES),
        (Category.HARDWARE, True, True, RetryAdvice.RETRY_EXCLUDING_NODES),
        (Category.SYSTEM_SOFTWARE, True, False, RetryAdvice.RETRY_EXCLUDING_NODES),
        (Category.APPLICATION, False, False, RetryAdvice.STOP),
        (Category.INFRASTRUCTURE, False, False, RetryAdvice.RETRY_SAME_NODES),
        (Category.UNKNOWN, False, False, RetryAdvice.RETRY_SAME_NODES),
        (Category.INFRASTRUCTURE, False, True, RetryAdvice.STOP),
    ],
)
def test_retry_advice_follows_the_decision_table(category, node_evidence, recurrence, advice):
    assert advise(FailureKind.CRASH, category, node_evidence, recurrence) is advice
    assert advise(FailureKind.HANG, category, node_evidence, recurrence) is advice
