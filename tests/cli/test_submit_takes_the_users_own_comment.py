"""`lazarus submit` finds the user's own --comment among the sbatch arguments, in either spelling, and
keeps everything else in order; the opt-in it builds from it is one the telemetry loop accepts."""

from __future__ import annotations

import json

import pytest

from lazarus.cli.submit import split_own_comment
from lazarus.models.policy import Policy
from lazarus.telemetry.optin import opt_in_comment, parse_opt_in


@pytest.mark.parametrize(
    "args,rest,own",
    [
        (["-N2", "train.sh"], ["-N2", "train.sh"], None),
        (["--comment=team=nlp", "-N2", "train.sh"], ["-N2", "train.sh"], "team=nlp"),
        (["-N2", "--comment", "team nlp", "train.sh", "--lr", "3"], ["-N2", "train.sh", "--lr", "3"], "team nlp"),
        (["--comment"], [], ""),
    ],
)
def test_the_own_comment_is_taken_out_of_the_sbatch_arguments(args, rest, own):
    assert split_own_comment(args) == (rest, own)


def test_the_comment_submit_builds_is_one_the_loop_accepts_with_the_users_text_kept():
    _, own = split_own_comment(["--comment=team=nlp", "train.sh"])
    built = opt_in_comment("gpu", own)
    assert parse_opt_in(built, {"gpu": Policy(selectable=True)}).policy_name == "gpu"
    assert json.loads(built)["comment"] == "team=nlp"
