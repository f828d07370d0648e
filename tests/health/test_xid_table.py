"""The Xid table gives every code exactly one class; unknown codes are worth a look, not a drain."""

from lazarus.health.xid import _APPLICATION, _DEGRADING, _FATAL, XidClass, classify_xid, describe_xid


def test_no_xid_code_is_in_two_classes():
    assert not (_FATAL & _DEGRADING) and not (_FATAL & _APPLICATION) and not (_DEGRADING & _APPLICATION)


def test_the_well_known_codes_have_their_documented_class():
    assert {classify_xid(c) for c in (48, 64, 74, 79, 95, 119)} == {XidClass.FATAL}
    assert {classify_xid(c) for c in (13, 31, 43, 45)} == {XidClass.APPLICATION}
    assert {classify_xid(c) for c in (63, 92, 94)} == {XidClass.DEGRADING}


def test_an_unknown_xid_is_degrading_and_described_by_number():
    assert classify_xid(9999) is XidClass.DEGRADING
    assert describe_xid(9999) == "Xid 9999"
    assert describe_xid(79) == "Xid 79 (GPU has fallen off the bus)"
