"""The one PromQL query per cycle: window means by job and node (or rank), for the listed jobs or all."""

from datetime import timedelta

import pytest
from pydantic import ValidationError

from lazarus.straggler.prometheus import PrometheusThroughput, ThroughputQuery


def test_the_query_sums_window_means_per_node_for_the_listed_jobs():
    q = ThroughputQuery(job_ids=["1234", "1235_7"], window=timedelta(seconds=30))
    assert q.promql() == (
        'sum by (job_id, node) (avg_over_time(lazarus_rank_samples_per_second{job_id=~"1234|1235_7"}[30s]))'
    )


def test_rank_level_keeps_the_rank_label_and_no_job_ids_means_every_job():
    q = ThroughputQuery(level="rank", metric="my_tokens_per_second")
    assert q.promql() == "sum by (job_id, node, rank) (avg_over_time(my_tokens_per_second[60s]))"


@pytest.mark.parametrize("job_id", ['1"}', "1|.*", "a b", ""])
def test_job_ids_that_could_change_the_query_are_refused(job_id):
    with pytest.raises(ValidationError, match="job ids may hold only"):
        ThroughputQuery(job_ids=[job_id])


def test_a_window_must_be_whole_seconds():
    with pytest.raises(ValidationError, match="whole number of seconds"):
        ThroughputQuery(window=timedelta(milliseconds=1500))


def test_an_empty_job_list_asks_prometheus_nothing():
    # Port 1 would refuse a connection; an empty list must not even try.
    assert PrometheusThroughput("http://127.0.0.1:1").fetch(ThroughputQuery(job_ids=[])) == []
