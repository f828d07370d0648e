"""The catalogue is data, validated strictly when loaded: a bad edit fails loudly, naming the entry."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from lazarus.detection.advice_table import advise
from lazarus.detection.catalogue import Role, default_catalogue, load_catalogue, parse_catalogue
from lazarus.detection.engine import prefilter_for
from lazarus.errors import ConfigError
from lazarus.models.diagnosis import Category

CATALOGUE = default_catalogue()


def _raw() -> dict:
    from importlib import resources

    return yaml.safe_load(resources.files("lazarus.detection").joinpath("signatures.yaml").read_text())


def _sig(data: dict, signature_id: str) -> dict:
    return next(s for s in data["signatures"] if s["id"] == signature_id)


def test_every_example_is_claimed_by_its_own_signature():
    # Catalogue order decides which signature claims a line; an example shadowed by an earlier entry is a bug.
    for sig in CATALOGUE.signatures:
        for example in sig.examples:
            claimed = CATALOGUE.match(example)
            assert claimed is not None and claimed[0].id == sig.id, (sig.id, example, claimed and claimed[0].id)


def test_every_example_of_a_triggering_signature_passes_the_prefilter():
    # Benign keywords are deliberately absent: a benign line only needs a look when another keyword is in it.
    prefilter = prefilter_for(CATALOGUE)
    for sig in CATALOGUE.signatures:
        if sig.role is Role.BENIGN:
            continue
        for example in sig.examples:
            assert prefilter.hit(example), (sig.id, example)
            assert prefilter.raw.search(example.encode()) is not None


@pytest.mark.parametrize(
    "code",
    [
        8,
        13,
        31,
        43,
        45,
        46,
        48,
        54,
        61,
        62,
        63,
        64,
        74,
        79,
        92,
        94,
        95,
        109,
        119,
        120,
        123,
        136,
        140,
        143,
        145,
        154,
        155,
        156,
        158,
    ],
)
def test_each_documented_xid_code_has_a_specific_signature(code):
    line = f"May  1 12:00:03 node1 kernel: NVRM: Xid (PCI:0000:07:00): {code}, pid=1, name=python, text to 0x2"
    sig, _ = CATALOGUE.match(line)
    assert sig.family.startswith("xid") or sig.family == "nvlink"
    assert sig.id != "xid_other"


def test_an_unknown_xid_still_matches_the_generic_entry():
    sig, _ = CATALOGUE.match("node1 kernel: NVRM: Xid (PCI:0000:07:00): 999, pid=1, something new")
    assert sig.id == "xid_other"


def test_hardware_signatures_that_exclude_nodes_blame_them():
    for sig in CATALOGUE.signatures:
        if sig.role is Role.ROOT and sig.category is Category.HARDWARE:
            assert sig.blames_node, sig.id


def test_benign_signatures_come_before_all_others():
    roles = [sig.role for sig in CATALOGUE.signatures]
    last_benign = max(i for i, role in enumerate(roles) if role is Role.BENIGN)
    assert all(role is Role.BENIGN for role in roles[: last_benign + 1])


def test_duplicate_ids_are_rejected():
    data = _raw()
    data["signatures"].append(copy.deepcopy(_sig(data, "python_exception")))
    with pytest.raises(ConfigError, match="duplicate signature id 'python_exception'"):
        parse_catalogue(data, "test")


def test_a_regex_that_does_not_compile_is_rejected_with_its_id():
    data = _raw()
    _sig(data, "python_exception")["patterns"] = ["(unclosed"]
    with pytest.raises(ConfigError, match=r"python_exception: pattern '\(unclosed' does not compile"):
        parse_catalogue(data, "test")


def test_unknown_keys_are_rejected():
    data = _raw()
    data["signatures"][0]["colour"] = "red"
    with pytest.raises(ConfigError, match=r"signatures\.0\.colour"):
        parse_catalogue(data, "test")


def test_an_example_the_patterns_do_not_match_is_rejected():
    data = _raw()
    _sig(data, "python_exception")["examples"] = ["KeyError is mentioned but not at the start"]
    with pytest.raises(ConfigError, match="is not matched by any pattern"):
        parse_catalogue(data, "test")


def test_a_root_signature_without_advice_takes_the_decision_tables_advice():
    data = _raw()
    last = _sig(data, "python_exception")
    del last["retry_advice"]
    sig = parse_catalogue(data, "test").get(last["id"])
    assert sig.retry_advice is advise(sig.failure_kind, sig.category, node_evidence=sig.blames_node)


def test_advice_that_overrides_the_decision_table_needs_a_reason():
    data = _raw()
    last = _sig(data, "python_exception")
    assert last["category"] == "application"
    last["retry_advice"] = "retry_same_nodes"
    with pytest.raises(ConfigError, match="give advice_reason"):
        parse_catalogue(data, "test")
    last["advice_reason"] = "stated reason"
    assert parse_catalogue(data, "test").get(last["id"]).retry_advice.value == "retry_same_nodes"


def test_loading_a_missing_catalogue_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read signature catalogue"):
        load_catalogue(tmp_path / "nope.yaml")


def test_a_catalogue_file_round_trips(tmp_path):
    path = tmp_path / "sigs.yaml"
    path.write_text(yaml.safe_dump(_raw()))
    assert [s.id for s in load_catalogue(path).signatures] == [s.id for s in CATALOGUE.signatures]


def test_ids_and_doc_links_are_well_formed():
    for sig in CATALOGUE.signatures:
        assert re.fullmatch(r"https://\S+", sig.doc), sig.id
        assert sig.explanation.endswith("."), sig.id
