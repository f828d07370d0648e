"""Spec: Lazarus never loads a configuration file that another user could have written or replaced
(issue 8, item 6). The CLI's default is the dev stack's ``<state_dir>/lazarus.yaml`` under /var/tmp,
where anyone may create ``lazarus-dev`` first; a planted file is refused in one sentence (exit 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from lazarus.config import load_settings
from lazarus.devstack.stack import check_reachable
from lazarus.errors import ConfigError, DevStackError

NOBODY = 65534
PLANTED = "mode: act\ncluster: planted\n"


def _lazarus(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZARUS_")}
    env["LAZARUS_STATE_DIR_DEFAULT"] = str(state_dir)
    return subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def _plant(directory: Path, mode: int, owner: int | None = None) -> Path:
    directory.mkdir(exist_ok=True)
    config = directory / "lazarus.yaml"
    config.write_text(PLANTED)
    directory.chmod(mode)
    if owner is not None:
        os.chown(directory, owner, -1)
    return config


def test_the_cli_refuses_the_default_config_in_a_directory_every_user_may_write(tmp_path):
    config = _plant(tmp_path / "lazarus-dev", 0o777)
    result = _lazarus(config.parent, "jobs")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"lazarus: refusing configuration file {config}: every user may write its "
        f"directory {config.parent}, so anyone could replace it "
        f"(chmod o-w {config.parent})"
    )


def test_the_cli_refuses_the_default_config_in_a_directory_another_user_created_first(tmp_path):
    config = _plant(tmp_path / "lazarus-dev", 0o755, owner=NOBODY)
    result = _lazarus(config.parent, "jobs")
    assert result.returncode == 2
    assert f"its directory {config.parent} belongs to uid {NOBODY}, not to root or to you" in result.stderr


def test_a_config_file_of_another_user_is_refused(tmp_path):
    config = _plant(tmp_path, 0o755)
    os.chown(config, NOBODY, -1)
    with pytest.raises(ConfigError, match=f"it belongs to uid {NOBODY}, not to root or to you"):
        load_settings(config)


def test_a_config_file_every_user_may_write_is_refused(tmp_path):
    config = _plant(tmp_path, 0o755)
    config.chmod(0o666)
    with pytest.raises(ConfigError, match=r"every user may write it \(chmod o-w"):
        load_settings(config)


def test_a_link_to_a_config_in_an_open_directory_is_refused(tmp_path):
    target = _plant(tmp_path / "open", 0o777)
    (tmp_path / "mine").mkdir(mode=0o755)
    (tmp_path / "mine" / "lazarus.yaml").symlink_to(target)
    with pytest.raises(ConfigError, match="every user may write its directory"):
        load_settings(tmp_path / "mine" / "lazarus.yaml")


def test_a_config_of_ours_in_a_sticky_directory_like_tmp_is_loaded(tmp_path):
    config = _plant(tmp_path / "sticky", 0o1777)
    assert load_settings(config).cluster == "planted"


def test_the_dev_stack_refuses_a_state_directory_another_user_created(tmp_path):
    state = tmp_path / "lazarus-dev"
    state.mkdir()
    os.chown(state, NOBODY, -1)
    tmp_path.chmod(0o755)
    with pytest.raises(DevStackError, match=f"belongs to uid {NOBODY}, not to you"):
        check_reachable(state)


def test_the_dev_stack_makes_its_state_directory_writable_by_its_owner_only():
    parent = Path(tempfile.mkdtemp(prefix="lazarus-trust-", dir="/var/tmp"))  # munge must reach it: not /tmp/pytest-*
    try:
        parent.chmod(0o755)
        state = parent / "lazarus-dev"
        state.mkdir()
        state.chmod(0o777)
        check_reachable(state)
        assert state.stat().st_mode & 0o777 == 0o755
    finally:
        shutil.rmtree(parent)
