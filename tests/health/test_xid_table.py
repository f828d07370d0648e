"""The node agent's Xid classes come from the signature catalogue; unknown codes are worth a look, not a drain."""

import pytest

from lazarus.detection.catalogue import parse_catalogue
from lazarus.detection.xids import ResolutionBucket
from lazarus.errors import ConfigError
from lazarus.health.xid import XidClass, classify_xid, describe_xid, xid_meaning


def test_no_xid_code_is_listed_twice_in_the_catalogue():
    entry = {
        "family": "x",
        "title": "t",
        "keywords": ["Xid"],
        "patterns": ["Xid"],
        "role": "advisory",
        "severity": 1,
        "explanation": "e",
        "doc": "d",
        "examples": ["Xid"],
        "xids": [{"code": 79, "name": "n", "bucket": "IGNORE"}],
    }
    with pytest.raises(ConfigError, match="Xid 79 is listed by both a and b"):
        parse_catalogue({"signatures": [{"id": "a", **entry}, {"id": "b", **entry}]}, "test")


def test_the_well_known_codes_have_their_documented_class():
    assert {classify_xid(c) for c in (48, 64, 74, 79, 95, 119)} == {XidClass.FATAL}
    assert {classify_xid(c) for c in (13, 31, 43, 45)} == {XidClass.NO_NODE_FAULT}
    assert {classify_xid(c) for c in (63, 92, 94)} == {XidClass.DEGRADING}


@pytest.mark.parametrize(
    ("code", "bucket", "klass"),
    [
        (8, ResolutionBucket.RESTART_APP, XidClass.NO_NODE_FAULT),  # restart the application; the GPU is fine
        (45, ResolutionBucket.WORKFLOW_XID_45, XidClass.NO_NODE_FAULT),  # clean-up after another fault
        (54, ResolutionBucket.CHECK_MECHANICALS, XidClass.FATAL),  # power or cooling needs hands on the node
        (69, ResolutionBucket.RESTART_APP, XidClass.NO_NODE_FAULT),  # the application's bad method
        (109, ResolutionBucket.RESET_GPU, XidClass.FATAL),  # whatever induced it, the GPU needs a reset
        (121, ResolutionBucket.IGNORE, XidClass.DEGRADING),  # a C2C link error that was recovered: watch
        (122, ResolutionBucket.CONTACT_SUPPORT, XidClass.FATAL),  # SPI flash access failed
        (123, ResolutionBucket.CONTACT_SUPPORT, XidClass.FATAL),
        (154, ResolutionBucket.RECOVERY_ACTION, XidClass.RECOVERY_ACTION),  # the reported action decides
    ],
)
def test_the_codes_the_two_old_tables_disagreed_on_follow_nvidias_bucket(code, bucket, klass):
    assert xid_meaning(code).bucket is bucket
    assert classify_xid(code) is klass


def test_an_unknown_xid_is_degrading_and_described_by_number():
    assert classify_xid(9999) is XidClass.DEGRADING
    assert xid_meaning(9999).bucket is None and xid_meaning(9999).signature == "xid_other"
    assert describe_xid(9999) == "Xid 9999"
    assert describe_xid(79) == "Xid 79 (GPU has fallen off the bus)"
