"""Freeze the dev/test split of the real corpus (``tests/detection/real_corpus/*.yaml``) by source.

Every excerpt of one source (its normalised ``source_url``) lands in the same
split, so a thread cannot leak from the tuning set into the scoring set. The
rule is a hash, not a random draw, so anyone can recompute it:

    test  iff  int(sha256(normalised URL).hexdigest(), 16) % 100 < 35

The manifest ``tests/detection/real_corpus/split.yaml`` lists the test sources
and is committed: it is the frozen split. Sources added to the corpus after
the manifest was written are *dev* (they were never scored as test), so adding
excerpts never changes the test set. Run ``--write`` only to create the
manifest; a second run refuses to overwrite it unless ``--force`` is given.

Usage: ``python scripts/split_real_corpus.py [--write [--force]]``
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "detection" / "real_corpus"
MANIFEST = CORPUS / "split.yaml"
TEST_PERCENT = 35
RULE = f"test iff int(sha256(normalised source_url), 16) % 100 < {TEST_PERCENT}; sources not listed are dev"


def normalise_url(url: str) -> str:
    """One spelling per source: lower-case scheme and host, no anchor, no query, no trailing slash."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def hashed_split(url: str) -> str:
    """``test`` or ``dev`` for a normalised source URL, by the frozen rule."""
    value = int(hashlib.sha256(url.encode("utf-8")).hexdigest(), 16)
    return "test" if value % 100 < TEST_PERCENT else "dev"


def load_excerpts(corpus: Path = CORPUS) -> list[dict]:
    """All excerpts of the corpus files (``split.yaml`` excluded), identical excerpt texts kept once."""
    seen: set[str] = set()
    excerpts = []
    for path in sorted(corpus.glob("*.yaml")):
        if path.name == MANIFEST.name:
            continue
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            text = entry["excerpt"].strip()
            if text in seen:
                continue
            seen.add(text)
            excerpts.append({**entry, "file": path.name})
    return excerpts


def load_test_sources(manifest: Path = MANIFEST) -> set[str]:
    """The frozen test sources (normalised URLs); empty when no manifest exists yet."""
    if not manifest.exists():
        return set()
    return set(yaml.safe_load(manifest.read_text(encoding="utf-8"))["test"])


def split_of(entry: dict, test_sources: set[str]) -> str:
    """The split of one excerpt under the committed manifest: test when its source is listed, else dev."""
    return "test" if normalise_url(entry["source_url"]) in test_sources else "dev"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the manifest")
    parser.add_argument("--force", action="store_true", help="overwrite an existing manifest")
    args = parser.parse_args(argv)
    excerpts = load_excerpts()
    sources = sorted({normalise_url(e["source_url"]) for e in excerpts})
    test = sorted(s for s in sources if hashed_split(s) == "test")
    if args.write:
        if MANIFEST.exists() and not args.force:
            print(f"{MANIFEST} exists: the split is frozen (use --force to recreate it)", file=sys.stderr)
            return 1
        header = (
            "# The frozen dev/test split of the real corpus, by source (scripts/split_real_corpus.py).\n"
            "# Score the test split only at the end; tune on dev.\n"
        )
        body = yaml.safe_dump({"rule": RULE, "test_percent": TEST_PERCENT, "test": test}, sort_keys=False, width=200)
        MANIFEST.write_text(header + body, encoding="utf-8")
    frozen = load_test_sources() if MANIFEST.exists() else set(test)
    counts = {"dev": 0, "test": 0}
    for entry in excerpts:
        counts[split_of(entry, frozen)] += 1
    print(
        f"sources: {len(sources)} ({len(sources) - len(frozen & set(sources))} dev, "
        f"{len(frozen & set(sources))} test); excerpts: {len(excerpts)} "
        f"({counts['dev']} dev, {counts['test']} test)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
