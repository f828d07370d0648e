"""Spec: a configuration file that cannot be used is reported in one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazarus.config import load_settings
from lazarus.errors import ConfigError


def _one_line_error(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    message = str(err.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert _one_line_error(missing) == f"configuration file {missing} does not exist"


def test_malformed_yaml_gives_the_problem_and_its_position(write_config) -> None:
    path = write_config("cluster: prod\n  temporal: [\n")
    message = _one_line_error(path)
    assert message == (
        f"configuration file {path} is not valid YAML: mapping values are not allowed here at line 2, column 11"
    )


def test_a_file_that_is_not_a_mapping_is_refused(write_config) -> None:
    message = _one_line_error(write_config("- cluster\n- prod\n"))
    assert message.endswith("must hold a mapping at the top level")


def test_a_directory_instead_of_a_file_is_refused(tmp_path: Path) -> None:
    message = _one_line_error(tmp_path)
    assert message.startswith(f"cannot read configuration file {tmp_path}:")


def test_an_empty_file_means_all_defaults(write_config) -> None:
    assert load_settings(write_config("")).cluster == "local"
