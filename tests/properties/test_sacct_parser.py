"""``sacct -P -n -D`` parser: rendered rows parse back to the same fields; any other text gives rows
or a typed Slurm error, never a crash."""

from __future__ import annotations

import hostlist
from hypothesis import example, given
from hypothesis import strategies as st

from lazarus.models.slurm import SacctRecord
from lazarus.slurm.errors import SlurmError
from lazarus.slurm.parse import SACCT_FORMAT, parse_sacct
from tests.properties.strategies import hostile_text, job_states, local_to_utc, node_sets, slurm_times

job_ids = st.builds(
    lambda job, step: f"{job}{step}",
    st.integers(1, 2**32 - 1).map(str),
    st.sampled_from(["", ".batch", ".extern", ".0", ".12"]),
)


@st.composite
def sacct_rows(draw) -> tuple[str, SacctRecord]:
    """One ``JobID|State|ExitCode|NodeList|Start|End`` row and the record it must parse to."""
    state = draw(job_states)
    nodes = draw(node_sets)
    start, end = draw(st.one_of(st.none(), slurm_times)), draw(st.one_of(st.none(), slurm_times))
    code, signal = draw(st.integers(0, 255)), draw(st.integers(0, 127))
    suffix = draw(st.sampled_from(["", "+", " by 1000"]))  # "CANCELLED by 1000", "RUNNING+"
    record = SacctRecord(
        job_id=draw(job_ids),
        state=state,
        exit_code=code,
        exit_signal=signal,
        nodes=hostlist.expand_hostlist(hostlist.collect_hostlist(nodes)),
        start_time=local_to_utc(start) if start else None,
        end_time=local_to_utc(end) if end else None,
    )
    row = "|".join(
        [
            record.job_id,
            state.value + suffix,
            f"{code}:{signal}",
            hostlist.collect_hostlist(nodes) or "None assigned",
            start.isoformat() if start else "Unknown",
            end.isoformat() if end else "Unknown",
        ]
    )
    return row, record


def parses_or_refuses(text: str) -> list[SacctRecord] | None:
    """Parse; a typed Slurm error is an accepted answer (None), anything else fails the test."""
    try:
        return parse_sacct(text)
    except SlurmError as error:
        assert str(error)
        return None


@given(st.lists(sacct_rows(), max_size=6))
def test_rendered_rows_parse_back_in_order(rows):
    assert parse_sacct("\n".join(row for row, _ in rows) + "\n") == [record for _, record in rows]


@given(hostile_text)
@example("7| |0:0|node1|Unknown|Unknown")  # a blank state
@example("7|FAILED|²:0|node1|Unknown|Unknown")
@example("7|FAILED|1:0|node[1-2|Unknown|Unknown")
@example("|".join(["x"] * len(SACCT_FORMAT.split(","))))
def test_any_text_gives_rows_or_a_typed_error(text):
    rows = parses_or_refuses(text)
    assert rows is None or all(isinstance(row, SacctRecord) for row in rows)


@given(st.lists(sacct_rows(), min_size=1, max_size=3), st.data())
def test_mutated_rows_give_rows_or_a_typed_error(rows, data):
    text = "\n".join(row for row, _ in rows)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 20)))
    parses_or_refuses(text[:start] + data.draw(hostile_text) + text[end:])
