"""``squeue --json`` parser: any output gives job snapshots or a typed Slurm error, never a crash.

The parser reads the one whole-cluster answer per telemetry cycle, so an
exception it does not type (a ``KeyError``, an ``OverflowError`` from a
timestamp, a pydantic ``ValidationError``) would stop telemetry for every job.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.models.slurm import JobSnapshot
from lazarus.slurm.errors import SlurmError
from lazarus.slurm.parse_squeue import parse_squeue_json
from tests.properties.strategies import hostile_text, huge_ints, job_states, json_values, node_sets

# Every key the parser reads, so that random values land where they are looked at.
JOB_KEYS = (
    "job_id",
    "job_state",
    "exit_code",
    "state_reason",
    "name",
    "user_name",
    "partition",
    "restart_cnt",
    "nodes",
    "excluded_nodes",
    "batch_host",
    "comment",
    "current_working_directory",
    "start_time",
    "end_time",
    "submit_time",
    "priority",
    "tasks_per_node",
    "tasks",
    "node_count",
)
number_wrappers = st.builds(lambda set_, number: {"set": set_, "number": number}, st.booleans(), json_values)
hostile_jobs = st.fixed_dictionaries(
    {"job_id": st.one_of(huge_ints, json_values)},
    optional={key: st.one_of(json_values, huge_ints, number_wrappers) for key in JOB_KEYS[1:]},
)
hostile_documents = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"jobs": st.lists(st.one_of(hostile_jobs, json_values), max_size=3)}, optional={"errors": json_values}
    ),
)


def parses_or_refuses(text: str) -> list[JobSnapshot] | None:
    """Parse; a typed Slurm error is an accepted answer (None), anything else propagates and fails the test."""
    try:
        jobs = parse_squeue_json(text)
    except SlurmError as error:
        assert str(error)  # one readable sentence
        return None
    assert all(isinstance(job, JobSnapshot) for job in jobs)
    return jobs


@given(hostile_text)
@example('{"jobs": [')
@example("\x00")
def test_any_text_gives_jobs_or_a_typed_error(text):
    parses_or_refuses(text)


@given(hostile_documents)
@example({"jobs": [{"job_id": 1, "start_time": 10**30}]})  # fromtimestamp overflow
@example({"jobs": [{"job_id": 1, "job_state": " "}]})  # a blank state
@example({"jobs": [{"job_id": 1, "job_state": 7}]})  # a state of the wrong type
@example({"jobs": [{"job_id": 1, "nodes": 5}]})  # a node list of the wrong type
@example({"jobs": [{"job_id": 1, "restart_cnt": -1}]})  # a negative count
@example({"jobs": [{"job_id": 1, "batch_host": ["node1"]}]})
@example({"jobs": [{"job_id": 1, "exit_code": {"signal": {"id": 5}}}]})
@example({"jobs": [{"job_id": 1, "tasks_per_node": {"set": True, "number": -3}}]})
def test_any_json_document_gives_jobs_or_a_typed_error(document):
    parses_or_refuses(json.dumps(document))


@given(hostile_documents, st.integers(min_value=0, max_value=200))
def test_truncated_output_gives_jobs_or_a_typed_error(document, cut):
    text = json.dumps(document)
    parses_or_refuses(text[: len(text) * cut // 200])


@st.composite
def squeue_jobs(draw):
    """A job as 22.05's squeue --json prints it, with the snapshot fields it must parse to."""
    state = draw(job_states)
    nodes = sorted(draw(node_sets))
    times = [draw(st.integers(min_value=1, max_value=4_000_000_000)) for _ in range(3)]
    code, signal = draw(st.integers(0, 255)), draw(st.integers(0, 127))
    job = {
        "job_id": draw(st.integers(min_value=1, max_value=2**32 - 1)),
        "job_state": state.value,
        "name": draw(st.text(max_size=20)),
        "user_name": draw(st.text(max_size=10)),
        "partition": draw(st.text(max_size=10)),
        "restart_cnt": draw(st.integers(0, 10_000)),
        "nodes": ",".join(nodes),
        "exit_code": code << 8 | signal,
        "comment": draw(st.text(max_size=40)),
        "submit_time": times[0],
        "start_time": times[1],
        "end_time": times[2],
    }
    return job, nodes


@given(squeue_jobs())
def test_a_printed_job_parses_back_to_the_same_fields(printed):
    job, nodes = printed
    (snapshot,) = parse_squeue_json(json.dumps({"errors": [], "jobs": [job]}))
    assert snapshot.job_id == job["job_id"] and snapshot.state.value == job["job_state"]
    assert (snapshot.name, snapshot.user, snapshot.partition) == (job["name"], job["user_name"], job["partition"])
    assert snapshot.restarts == job["restart_cnt"] and snapshot.comment == job["comment"]
    assert sorted(snapshot.nodes) == nodes
    assert snapshot.submit_time == datetime.fromtimestamp(job["submit_time"], tz=UTC)
    if snapshot.state.finished:
        assert (snapshot.exit_code, snapshot.exit_signal or 0) == (job["exit_code"] >> 8, job["exit_code"] & 0x7F)
    else:
        assert snapshot.exit_code is None
