"""The keyword prefilter is an exact stand-in for "does any keyword occur in this line"."""

from __future__ import annotations

import random

import pytest

from lazarus.detection.prefilter import Prefilter, trie_pattern


def test_trie_matches_exactly_when_some_keyword_occurs():
    rng = random.Random(7)
    words = ["NCCL WARN", "NCCL", "Xid", "X", "CUDA error", "CUDA out of memory", "*** JOB", "a.b(c)"]
    prefilter = Prefilter(words)
    alphabet = "NCLWARXidUerorm *JOBab.()c"
    for _ in range(3000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert prefilter.hit(line) == any(w in line for w in words), line


def test_regex_metacharacters_are_literal():
    prefilter = Prefilter(["a.b(c)", "[Rank"])
    assert prefilter.hit("x a.b(c) y") and prefilter.hit("[Rank 3]")
    assert not prefilter.hit("axb(c)") and not prefilter.hit("Rank")


def test_an_empty_keyword_set_is_refused():
    with pytest.raises(ValueError):
        trie_pattern([])


def test_keyword_finder_reports_every_keyword_including_overlapping_ones():
    from lazarus.detection.prefilter import KeywordFinder

    rng = random.Random(11)
    words = ["NCCL", "NCCL error", "error", "CUDA error", "Error", "RemoteError", "or"]
    finder = KeywordFinder(words)
    alphabet = "NCLUDA erorRemtE"
    for _ in range(3000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert finder.find(line) == {w for w in words if w in line}, line
