"""One combined regular expression of literal keywords, used to skip lines cheaply.

Almost every line of a training log is benign progress output. Running ~100
signature regexes on each of them would take minutes per gigabyte, so each
signature declares literal *keywords*, at least one of which appears in every
line it matches. The keywords are merged into a trie-shaped regex: Python's
``re`` then rejects a position after one character test, and only lines that
contain a keyword are looked at further. Keywords that start with an upper-case
letter or punctuation keep it fast; a keyword starting with a common lower-case
letter makes the scanner stop at many more positions (see
docs/adding-a-signature.md for the measured cost).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_Trie = dict[str, "_Trie"]
_END = ""


def _insert(trie: _Trie, word: str) -> None:
    node = trie
    for char in word:
        node = node.setdefault(char, {})
    node[_END] = {}


def _to_regex(node: _Trie, longest: bool) -> str:
    """Render a trie node as a regex.

    For the prefilter (``longest=False``) a word that is a prefix of another
    ends the match early: the shorter keyword already proves the line is
    interesting. For keyword lookup (``longest=True``) the longer words are
    tried first (a greedy optional group), so the match names the longest
    keyword starting at that position.
    """
    children = {char: child for char, child in node.items() if char != _END}
    if _END in node and (not longest or not children):
        return ""
    branches = [re.escape(char) + _to_regex(child, longest) for char, child in sorted(children.items())]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if _END in node:
        return f"(?:{body})?"
    return body


def trie_pattern(words: Iterable[str], longest: bool = False) -> str:
    """Return one regex source that matches any of ``words`` (literal, case-sensitive)."""
    trie: _Trie = {}
    unique = sorted({w for w in words if w})
    if not unique:
        raise ValueError("a prefilter needs at least one keyword")
    for word in unique:
        _insert(trie, word)
    return _to_regex(trie, longest)


class Prefilter:
    """The same keyword set compiled for ``str`` lines and for raw ``bytes`` blocks."""

    def __init__(self, words: Iterable[str]) -> None:
        source = trie_pattern(words)
        self.text = re.compile(source)
        self.raw = re.compile(source.encode("utf-8"))

    def hit(self, line: str) -> bool:
        return self.text.search(line) is not None


class KeywordFinder:
    """All keywords occurring in a line (overlapping occurrences included), found at C speed."""

    def __init__(self, words: Iterable[str]) -> None:
        unique = sorted({w for w in words if w})
        # At each position the trie yields the longest keyword starting there; every keyword that is a
        # prefix of it occurs there too. Restarting one character after each hit's start (not after its
        # end) visits every position where a keyword starts.
        self._regex = re.compile(trie_pattern(unique, longest=True))
        self._prefixes = {w: tuple(p for p in unique if w.startswith(p)) for w in unique}

    def find(self, line: str) -> set[str]:
        found: set[str] = set()
        search, prefixes, position = self._regex.search, self._prefixes, 0
        while (match := search(line, position)) is not None:
            found.update(prefixes[match.group()])
            position = match.start() + 1
        return found
