"""``scontrol show job`` / ``show node`` parsers: a rendered record parses back to the same fields,
and any other text gives records or a typed Slurm error, never a crash.

Free-text fields (job name, comment, paths, a node's reason) are written by
users or admins; whatever they hold, including text that looks like Slurm's
own ``Key=value`` fields, must come back verbatim and never change another field.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import hostlist
from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.models.slurm import JobSnapshot, JobState, NodeState
from lazarus.slurm.errors import SlurmError
from lazarus.slurm.parse import parse_scontrol_jobs, parse_scontrol_nodes
from tests.properties.strategies import (
    HOSTILE_SNIPPETS,
    hostile_text,
    job_states,
    local_to_utc,
    node_names,
    node_sets,
    slurm_times,
    words,
)

NULLS = {"", "(null)", "None", "N/A", "Unknown", "n/a"}
# Free text stays on its own line: anything but a line break, no blanks at either end (scontrol's own padding).
free_text = (
    st.one_of(st.text(max_size=40), st.sampled_from(HOSTILE_SNIPPETS))
    .map(lambda text: " ".join(text.splitlines()).strip())
    .filter(lambda text: text not in NULLS)
)
# A non-free value ends at the next " Key=": no '=' and no blanks inside.
plain_value = st.text(st.characters(categories=("L", "N"), include_characters="-_.@/:"), min_size=1, max_size=12)


@st.composite
def scontrol_jobs(draw) -> tuple[str, JobSnapshot]:
    """The text of one ``scontrol show job`` record and the snapshot it must parse to."""
    state: JobState = draw(job_states)
    nodes, excluded = draw(node_sets), draw(node_sets)
    submit, start, end = draw(slurm_times), draw(slurm_times), draw(slurm_times)
    code, signal = draw(st.integers(0, 255)), draw(st.integers(0, 127))
    held = draw(st.booleans())
    expected = JobSnapshot(
        job_id=draw(st.integers(1, 2**32 - 1)),
        name=draw(free_text),
        user=draw(plain_value.filter(lambda u: "(" not in u)),
        user_id=1000,
        partition=draw(plain_value),
        state=state,
        state_reason=draw(words(st.sampled_from("abcXYZ[]@:._-"))),
        restarts=draw(st.integers(0, 10**6)),
        nodes=hostlist.expand_hostlist(hostlist.collect_hostlist(nodes)),
        excluded_nodes=hostlist.expand_hostlist(hostlist.collect_hostlist(excluded)),
        batch_host=draw(st.one_of(st.none(), node_names)),
        exit_code=code if state.finished else None,
        exit_signal=(signal or None) if state.finished else None,
        comment=draw(free_text),
        stdout_path=draw(free_text),
        stderr_path=draw(free_text),
        work_dir=draw(free_text),
        start_time=None if state is JobState.PENDING else local_to_utc(start),
        end_time=local_to_utc(end) if state.finished else None,
        submit_time=local_to_utc(submit),
        held=held and not state.finished and state is not JobState.RUNNING,
        priority=0 if held else 4294901748,
    )
    lines = [
        f"JobId={expected.job_id} JobName={expected.name}",
        f"   UserId={expected.user}(1000) GroupId=users(100) MCS_label=N/A",
        f"   Priority={0 if held else 4294901748} Nice=0 Account=root QOS=normal",
        f"   JobState={state.value} Reason={expected.state_reason or 'None'} Dependency=(null)",
        f"   Requeue=1 Restarts={expected.restarts} BatchFlag=1 Reboot=0 ExitCode={code}:{signal}",
        f"   SubmitTime={submit.isoformat()} EligibleTime={submit.isoformat()}",
        f"   StartTime={start.isoformat()} EndTime={end.isoformat()} Deadline=N/A",
        f"   Partition={expected.partition} AllocNode:Sid=localhost:3904",
        f"   ReqNodeList=(null) ExcNodeList={hostlist.collect_hostlist(excluded) or '(null)'}",
        f"   NodeList={hostlist.collect_hostlist(nodes) or '(null)'}",
        f"   BatchHost={expected.batch_host or '(null)'}",
        "   NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
        f"   WorkDir={expected.work_dir}",
        f"   Comment={expected.comment}",
        f"   StdErr={expected.stderr_path}",
        "   StdIn=/dev/null",
        f"   StdOut={expected.stdout_path}",
        "   Power=",
    ]
    return "\n".join(lines) + "\n", expected


def parses_or_refuses(parse, text: str) -> list | None:
    """Parse; a typed Slurm error is an accepted answer (None), anything else fails the test."""
    try:
        return parse(text)
    except SlurmError as error:
        assert str(error)
        return None


@given(scontrol_jobs())
@example(
    (
        "JobId=7 JobName=x\n   JobState=RUNNING Reason=None\n   Comment=x Restarts=9 StdOut=/etc/shadow\n",
        JobSnapshot(job_id=7, name="x", state=JobState.RUNNING, comment="x Restarts=9 StdOut=/etc/shadow"),
    )
)
def test_a_rendered_job_parses_back_to_the_same_fields(record):
    text, expected = record
    (job,) = parse_scontrol_jobs(text)
    assert job == expected


@given(st.lists(scontrol_jobs(), min_size=1, max_size=4))
def test_several_records_parse_in_order(records):
    jobs = parse_scontrol_jobs("\n".join(text for text, _ in records))
    assert [job.job_id for job in jobs] == [expected.job_id for _, expected in records]


@given(hostile_text)
@example("JobId=² JobState=RUNNING")  # a Unicode digit passes str.isdigit but not int()
@example("JobId=1 JobState=RUNNING Restarts=" + "9" * 5000)  # past Python's int-from-text limit
@example("JobId=1 JobState=FAILED ExitCode=³:0")
@example("JobId=1 JobState=RUNNING StartTime=0001-01-01T00:00:00")
def test_any_text_gives_jobs_or_a_typed_error(text):
    jobs = parses_or_refuses(parse_scontrol_jobs, text)
    assert jobs is None or all(isinstance(job, JobSnapshot) for job in jobs)


@given(scontrol_jobs(), st.data())
def test_a_mutated_record_gives_jobs_or_a_typed_error(record, data):
    text, _ = record
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 40)))
    mutated = text[:start] + data.draw(hostile_text) + text[end:]
    parses_or_refuses(parse_scontrol_jobs, mutated)


@st.composite
def scontrol_nodes(draw) -> tuple[str, NodeState]:
    name = draw(node_names)
    state = draw(st.sampled_from(["IDLE", "ALLOCATED", "MIXED", "IDLE+DRAIN", "DOWN+NOT_RESPONDING", "DRAINING"]))
    reason = draw(free_text)
    lines = [
        f"NodeName={name} Arch=x86_64 CoresPerSocket=4",
        "   Gres=gpu:4",
        f"   OS={draw(free_text)}",
        f"   State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1",
        f"   Reason={reason}",
    ]
    return "\n".join(lines) + "\n", NodeState(name=name, state=state, reason=reason)


@given(st.lists(scontrol_nodes(), min_size=1, max_size=4, unique_by=lambda record: record[1].name))
def test_rendered_nodes_parse_back_to_the_same_fields(records):
    assert parse_scontrol_nodes("\n".join(text for text, _ in records)) == [node for _, node in records]


@given(hostile_text)
def test_any_text_gives_nodes_or_a_typed_error(text):
    nodes = parses_or_refuses(parse_scontrol_nodes, text)
    assert nodes is None or all(isinstance(node, NodeState) for node in nodes)


@contextmanager
def local_zone(name: str) -> Iterator[None]:
    """Run with the process's local time zone set to ``name`` (scontrol prints local times)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ")
        else:
            os.environ["TZ"] = before
        time.tzset()


@given(
    st.sampled_from(["UTC", "America/New_York", "Asia/Tokyo"]),
    st.one_of(st.datetimes().map(lambda t: t.replace(microsecond=0).isoformat()), hostile_text),
)
@example("America/New_York", "9999-12-31T23:59:59")  # shifted into year 10000 by the zone
@example("Asia/Tokyo", "0001-01-01T00:00:00")
def test_a_time_in_any_local_zone_parses_or_gives_a_typed_error(zone, printed):
    with local_zone(zone):
        parses_or_refuses(
            parse_scontrol_jobs, f"JobId=1 JobState=COMPLETED\n   StartTime={printed} EndTime={printed}\n"
        )
