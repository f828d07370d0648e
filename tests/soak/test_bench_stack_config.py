"""The comparison's bench stack (benchmarks/comparison/stack.py) as its workers and its Prometheus see it: the
workers read the stack's own Prometheus for stragglers, which scrapes the ranks' registrations and every node
agent; a straggler gets advice only unless the run asks the bench policy to act on it."""

from __future__ import annotations

from datetime import timedelta

from benchmarks.comparison import prometheus
from benchmarks.comparison.stack import BENCH_POLICY, BenchStack
from lazarus.config import Settings


def _settings(stack: BenchStack) -> Settings:
    return Settings.model_validate(stack.config())


def test_the_workers_read_the_stacks_own_prometheus_with_2_s_straggler_windows() -> None:
    prom = _settings(BenchStack(run_id="t")).prometheus
    assert prom.enabled and prom.url == "http://127.0.0.1:63090"
    assert prom.straggler_window == timedelta(seconds=2) and prom.straggler_interval == timedelta(seconds=1)


def test_prometheus_scrapes_the_ranks_registrations_and_every_node_agent() -> None:
    stack = BenchStack(run_id="t")
    jobs = {j["job_name"]: j for j in prometheus.config(stack.layout, stack.agent_targets)["scrape_configs"]}
    (sd,) = jobs["lazarus-ranks"]["file_sd_configs"]
    assert sd["files"] == [f"{stack.metrics_sd_dir}/*.json"]
    (agents,) = jobs["lazarus-node-agents"]["static_configs"]
    assert agents["targets"] == [f"127.0.0.1:{port}" for port in range(63401, 63405)]
    assert all(j["honor_labels"] for j in jobs.values())  # the series keep their job_id, node and rank (Hostname)
    assert "--web.listen-address=127.0.0.1:63090" in stack.prometheus.argv
    assert str(stack.metrics_sd_dir).startswith(str(stack.layout.root))  # state under the stack dir


def test_a_straggler_is_advice_only_unless_the_run_asks_the_bench_policy_to_act() -> None:
    assert not _settings(BenchStack(run_id="t")).policies[BENCH_POLICY].act_on_stragglers
    assert _settings(BenchStack(run_id="t", act_on_stragglers=True)).policies[BENCH_POLICY].act_on_stragglers
