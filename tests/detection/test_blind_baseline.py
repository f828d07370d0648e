"""The blind text-only baseline (benchmarks/blind_baseline.py): readers see an excerpt's text and nothing that
could give its label away, two readers answer an overlap independently, and their answers are scored against
the thread labels next to the engine's on the same excerpts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "scripts")]

import blind_baseline  # noqa: E402
from blind_baseline import (  # noqa: E402
    QUESTIONS,
    batches,
    digests,
    examples_of,
    export,
    load_answers,
    questions,
    score,
)
from diagnosis_accuracy import Example, real_examples  # noqa: E402


def example(ident: str) -> Example:
    expect = {"failure_kind": "crash", "category": "application", "retry_advice": "stop", "implicated_nodes": []}
    return Example(id=ident, cls="c", files=[(f"{ident}.log", "x\n")], expect=expect)


def test_questions_are_named_in_an_order_that_does_not_follow_the_ids_and_never_repeats() -> None:
    examples = [example(f"nccl-timeout-{i}") for i in range(30)]
    named = questions(examples)
    assert [n for n, _ in named] == [f"q{i:03d}" for i in range(1, 31)]
    assert [e.id for _, e in named] != sorted(e.id for e in examples)
    assert questions(list(reversed(examples))) == named


def test_every_question_is_in_one_batch_and_each_batch_shares_its_head_with_the_previous_one() -> None:
    names = [f"q{i:03d}" for i in range(1, 26)]
    out = batches(names, 3, 2)
    cores = [b[:-2] for b in out]
    assert sorted(n for core in cores for n in core) == names
    assert out[0][-2:] == cores[1][:2]
    assert out[2][-2:] == cores[0][:2]


def test_an_exported_batch_carries_only_a_name_and_the_text(tmp_path: Path) -> None:
    export("scored", tmp_path, 6, 15)
    entries = [e for path in sorted(tmp_path.glob("batch_*.yaml")) for e in yaml.safe_load(path.read_text())]
    examples = real_examples("scored")
    assert {key for e in entries for key in e} == {"q", "text"}
    assert len({e["q"] for e in entries}) == len(examples)
    assert len(entries) == len(examples) + 6 * 15
    leaked = [e["q"] for e in entries for x in examples if x.id in e["text"] or x.source in e["text"]]
    assert leaked == []


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("- {q: q001, failure_kind: crashed, category: unknown}", "not an answer under the contract"),
        ("- {q: q001, failure_kind: crash, category: unknown, retry_advice: null}", "retry advice None for failure"),
        ("- {q: q001, failure_kind: crash, category: unknown, retry_advice: reboot}", "retry advice 'reboot'"),
        ("q001: crash", "not a list of answers"),
        ("- {q: q001, failure_kind: [", "not YAML"),
    ],
)
def test_an_answer_outside_the_contract_is_refused_in_one_line(tmp_path: Path, answer: str, why: str) -> None:
    (tmp_path / "answers_1.yaml").write_text(answer + "\n")
    with pytest.raises(SystemExit, match=why) as refused:
        load_answers(tmp_path)
    assert "\n" not in str(refused.value)


def test_a_benign_answer_carries_no_advice_and_two_files_answer_the_same_question_independently(
    tmp_path: Path,
) -> None:
    (tmp_path / "answers_1.yaml").write_text(
        "- {q: q001, failure_kind: none, category: unknown, retry_advice: stop}\n"
        "- {q: q002, failure_kind: crash, category: unknown, retry_advice: retry_same_nodes}\n"
    )
    (tmp_path / "answers_2.yaml").write_text("- {q: q002, failure_kind: hang, category: unknown, retry_advice: stop}\n")
    answers = load_answers(tmp_path)
    assert answers["q001"] == [{"failure_kind": "none", "category": "unknown", "retry_advice": None}]
    assert [a["failure_kind"] for a in answers["q002"]] == ["crash", "hang"]


def test_readers_are_scored_against_the_labels_beside_the_engine_on_the_same_excerpts(tmp_path: Path) -> None:
    named = questions(real_examples("scored"))[:3]
    lines = []
    for name, e in named:
        want = e.expect
        lines.append(
            f"- {{q: {name}, failure_kind: {want['failure_kind']}, category: {want['category']}, "
            f"retry_advice: {want['retry_advice'] or 'null'}}}"
        )
    (tmp_path / "answers_1.yaml").write_text("\n".join(lines) + "\n")
    wrong = f"- {{q: {named[0][0]}, failure_kind: straggler, category: hardware, retry_advice: stop}}\n"
    (tmp_path / "answers_2.yaml").write_text(wrong)
    (tmp_path / QUESTIONS).write_text(yaml.safe_dump(digests(questions(real_examples("scored")))))
    report = score("scored", tmp_path)
    assert report["answered"] == 3
    assert report["reader"] == {"retry_advice": 1.0, "failure_kind": 1.0, "category": 1.0}
    assert report["answered_twice"] == 1
    assert report["readers_agree_on_overlap"]["failure_kind"] == 0.0
    assert set(report["engine"]) == {"retry_advice", "failure_kind", "category"}
    assert report["reader_or_engine_right"]["failure_kind"] == 1.0


def test_answers_follow_their_texts_when_the_corpus_changed_since_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = real_examples("scored")
    added = questions(examples)[0][1]  # it sorts first: every question name moves by one when it is added
    then = questions([e for e in examples if e is not added])  # the export, before it; one excerpt since removed
    removed = then[-1][1]
    (tmp_path / QUESTIONS).write_text(yaml.safe_dump(digests(then)))
    lines = [
        f"- {{q: {name}, failure_kind: {e.expect['failure_kind']}, category: {e.expect['category']}, "
        f"retry_advice: {e.expect['retry_advice'] or 'null'}}}"
        for name, e in then[:3] + then[-1:]
    ]
    (tmp_path / "answers_1.yaml").write_text("\n".join(lines) + "\n")
    now = [e for e in examples if e is not removed]
    assert dict(questions(now))[then[0][0]] is added  # the names moved
    monkeypatch.setattr(blind_baseline, "examples_of", lambda split: now)
    report = score("scored", tmp_path)
    assert report["answered"] == 3 and report["gone"] == 1
    assert report["reader"] == {"retry_advice": 1.0, "failure_kind": 1.0, "category": 1.0}


def test_answers_without_the_export_s_question_list_are_refused(tmp_path: Path) -> None:
    (tmp_path / "answers_1.yaml").write_text("- {q: q001, failure_kind: none, category: unknown}\n")
    with pytest.raises(SystemExit, match="missing"):
        score("scored", tmp_path)


@pytest.mark.parametrize("split", ["pool", "scored", "heldout"])
def test_every_committed_answer_still_finds_the_text_its_reader_saw(split: str) -> None:
    stored = ROOT / "benchmarks" / "blind_baseline" / split
    asked = yaml.safe_load((stored / QUESTIONS).read_text())
    assert set(load_answers(stored)) == set(asked)
    assert set(asked.values()) <= set(digests(questions(examples_of(split))).values())
