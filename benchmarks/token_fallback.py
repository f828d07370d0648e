"""An experiment, not part of ``lazarus diagnose``: a token classifier consulted only when no signature matches.

Measured with ``benchmarks/diagnosis_accuracy.py --cv 5`` (grouped by source)
and *not shipped*: on held-out sources it added about one point of retry-advice
accuracy and recovered benign logs (docs/benchmarks.md, "Third pass"). It stays
here so that the measurement can be repeated when the corpus grows.

The rules (the signature catalogue and its generic layer) answer first. When
they find nothing, the model reads the tail of the log. It is a multinomial
naive Bayes over *stable tokens* (exception types, error enums, errno names,
Xid and result codes, words; numbers and hex strings dropped), one token
counted once per log. Training is deterministic (sorted vocabulary, no random
draw).

The model predicts a failure kind and a category only; retry advice comes from
the decision table (:mod:`.advice_table`), with no node evidence, and it never
names a node. It speaks only when the failure label it prefers is at least
``min_posterior`` likely *and* the benign label is below ``max_benign``: a log
it cannot place stays "no failure found".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from lazarus.detection.advice_table import advise
from lazarus.detection.normalize import normalize
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind

SIGNATURE = "learned_fallback"
BENIGN = "none/unknown"
MAX_TOKENS_PER_LOG = 4000
MIN_TOKEN_DOCS = 2

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,40}")
_HEXISH = re.compile(r"^(?:0x)?[0-9a-f_]+$|^[0-9a-f]{8,}$")


def tokens(text: str) -> set[str]:
    """The stable tokens of a log text: words of 3+ characters, lower-cased, normalised line by line.

    Identifiers keep their shape (``ncclSystemError`` -> ``ncclsystemerror``); numbers on their own,
    hex strings and anything longer than 40 characters do not count (they differ between runs).
    """
    out: set[str] = set()
    for line in text.splitlines():
        for word in _TOKEN.findall(normalize(line)):
            low = word.lower()
            if not _HEXISH.match(low):
                out.add(low)
                if len(out) >= MAX_TOKENS_PER_LOG:
                    return out
    return out


class TokenModel(BaseModel):
    """The trained model: per-label log priors and per-label token log-likelihoods (naive Bayes)."""

    labels: list[str]
    vocabulary: list[str]
    log_prior: dict[str, float]
    log_likelihood: dict[str, dict[str, float]] = Field(description="label -> token -> log P(token | label)")
    log_unseen: dict[str, float] = Field(description="label -> log P(a vocabulary token unseen in that label)")
    min_posterior: float = 0.6
    max_benign: float = 0.2
    confidence: float = 0.5
    trained_on: int = 0

    def posterior(self, words: set[str]) -> dict[str, float]:
        """P(label | tokens) over the labels; tokens outside the vocabulary are ignored."""
        seen = sorted(words & set(self.vocabulary))
        scores = {
            lab: self.log_prior[lab] + sum(self.log_likelihood[lab].get(w, self.log_unseen[lab]) for w in seen)
            for lab in self.labels
        }
        top = max(scores.values())
        weights = {lab: math.exp(s - top) for lab, s in scores.items()}
        total = sum(weights.values())
        return {lab: w / total for lab, w in weights.items()}

    def predict(self, text: str) -> tuple[str, float] | None:
        """The failure label (``kind/category``) and its posterior, or None when the model should stay silent."""
        words = tokens(text)
        if not words:
            return None
        post = self.posterior(words)
        label = max(sorted(post), key=lambda lab: post[lab])
        if label == BENIGN or post[label] < self.min_posterior or post.get(BENIGN, 0.0) >= self.max_benign:
            return None
        return label, post[label]


def train(examples: Iterable[tuple[str, str]], smoothing: float = 0.5) -> TokenModel:
    """Train on ``(text, "kind/category")`` pairs; deterministic for a given list."""
    docs = [(tokens(text), label) for text, label in examples]
    doc_freq: Counter[str] = Counter(w for words, _ in docs for w in words)
    vocab = sorted(w for w, n in doc_freq.items() if n >= MIN_TOKEN_DOCS)
    labels = sorted({label for _, label in docs})
    per_label: dict[str, Counter[str]] = {lab: Counter() for lab in labels}
    label_docs: Counter[str] = Counter()
    for words, label in docs:
        label_docs[label] += 1
        per_label[label].update(w for w in words if w in doc_freq and doc_freq[w] >= MIN_TOKEN_DOCS)
    log_likelihood: dict[str, dict[str, float]] = {}
    log_unseen: dict[str, float] = {}
    for lab in labels:
        total = sum(per_label[lab].values()) + smoothing * len(vocab)
        log_likelihood[lab] = {
            w: round(math.log((n + smoothing) / total), 5) for w, n in sorted(per_label[lab].items())
        }
        log_unseen[lab] = round(math.log(smoothing / total), 5)
    return TokenModel(
        labels=labels,
        vocabulary=vocab,
        log_prior={lab: round(math.log(label_docs[lab] / len(docs)), 5) for lab in labels},
        log_likelihood=log_likelihood,
        log_unseen=log_unseen,
        trained_on=len(docs),
    )


def fallback_diagnosis(model: TokenModel, text: str, lines_seen: int, notes: list[str]) -> Diagnosis | None:
    """A diagnosis from the model's label for ``text``, or None when it stays silent."""
    found = model.predict(text)
    if found is None:
        return None
    label, posterior = found
    kind_name, category_name = label.split("/", 1)
    kind, category = FailureKind(kind_name), Category(category_name)
    return Diagnosis(
        failure_kind=kind,
        category=category,
        signature=SIGNATURE,
        retry_advice=advise(kind, category, node_evidence=False),
        implicated_nodes=[],
        confidence=model.confidence,
        explanation=(
            f"No signature matched in {lines_seen} line(s); the learned fallback (a token classifier trained on "
            f"the real corpus) reads the log's last lines as a {kind.value} ({category.value}), posterior "
            f"{posterior:.2f}. Advice from the decision table; no node is blamed."
        ),
        notes=notes,
    )
