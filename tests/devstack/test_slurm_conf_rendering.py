"""The generated Slurm configuration carries the settings the single-host cluster needs."""

from __future__ import annotations

import socket
from pathlib import Path

from lazarus.config import DevSettings
from lazarus.devstack.layout import Layout
from lazarus.devstack.slurm_conf import render_gres_conf, render_slurm_conf, render_slurmdbd_conf


def _conf(**kw) -> tuple[DevSettings, Layout]:
    dev = DevSettings(state_dir=Path("/var/tmp/x"), cluster_name="c1", **kw)
    return dev, Layout(dev.state_dir)


def test_munge_socket_is_named_in_authinfo_accounting_pass_and_slurmdbd_conf() -> None:
    dev, layout = _conf()
    conf, dbd = render_slurm_conf(dev, layout), render_slurmdbd_conf(dev, layout)
    socket_path = "/var/tmp/x/munge/munge.socket"
    assert f"AuthInfo=socket={socket_path},cred_expire=5" in conf
    assert f"AccountingStoragePass={socket_path}" in conf
    assert f"AuthInfo=socket={socket_path}" in dbd


def test_controller_is_this_host_and_nodes_have_consecutive_ports() -> None:
    dev, layout = _conf(nodes=3, slurmd_port0=20001, gpus_per_node=2)
    conf = render_slurm_conf(dev, layout)
    assert f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)" in conf
    assert "NodeName=node[1-3] NodeHostname=localhost NodeAddr=127.0.0.1 Port=20001-20003" in conf
    assert "Gres=gpu:2" in conf
    assert "File=/var/tmp/x/dev/nvidia[0-1]" in render_gres_conf(dev, layout)


def test_requeue_is_fast_by_configuration() -> None:
    conf = render_slurm_conf(*_conf())
    assert "SchedulerParameters=bf_interval=1,sched_interval=2" in conf
    assert "ReturnToService=2" in conf


def test_without_accounting_there_is_no_slurmdbd_link() -> None:
    conf = render_slurm_conf(*_conf(accounting=False))
    assert "AccountingStorageType=accounting_storage/none" in conf
    assert "\nAccountingStoragePass=" not in conf
