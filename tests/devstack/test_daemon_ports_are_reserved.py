"""Daemon ports inside the ephemeral range are reserved, so no outgoing connection can take them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazarus.devstack.netports import RESERVED, _parse_ranges
from tests.conftest import SlurmCluster


def test_reserved_port_list_is_parsed_with_ranges() -> None:
    assert _parse_ranges("36306,37001-37003\n") == {36306, 37001, 37002, 37003}
    assert _parse_ranges("\n") == set()


@pytest.mark.slurm
def test_test_cluster_ports_are_reserved_after_up(slurm_cluster: SlurmCluster) -> None:
    if not Path(RESERVED).exists():
        pytest.skip("this kernel has no ip_local_reserved_ports")
    reserved = _parse_ranges(RESERVED.read_text())
    dev = slurm_cluster.dev  # lztest: 36306, 36817, 36819, 37001-37004; an xdist worker's own cluster: 38N..
    daemons = {dev.mysql_port, dev.slurmctld_port, dev.slurmdbd_port, *range(dev.slurmd_port0, dev.slurmd_port0 + 4)}
    assert daemons <= reserved
