"""Record the workflow histories that tests/workflows/test_replay.py replays. One command regenerates them all:

    .venv/bin/python scripts/record_histories.py                  # every scenario, with the current workflow code
    .venv/bin/python scripts/record_histories.py hang_watchdog_restart node_ledger   # only these scenarios
    .venv/bin/python scripts/record_histories.py --rev 2ab9690    # with revision 2ab9690's workflow code
    .venv/bin/python scripts/record_histories.py --list

The scenarios are in tests/workflows/scenarios.py. They run on Temporal's time-skipping test server, and on the
dev server (started here, continue-as-new suggested after 20 events) for continue-as-new. Both binaries come
with the test extras; nothing is downloaded.

Two kinds of stored history (see CONTRIBUTING.md, "Workflow histories"):

- ``tests/histories/<name>.json``: recorded with the current code. Re-record them after an intended change to
  workflow code (a new scenario, a patched behaviour); a plain run also removes current-code histories that no
  scenario records any more.
- ``tests/histories/<name>@<rev>.json``: recorded with revision ``<rev>``'s ``workflows/``, ``lazarus/`` and
  ``activities/`` (``--rev``; the scenario drivers stay current). They stand for workflows started by that code and still
  running after an upgrade, so they are what a ``workflow.patched`` branch is tested against. They are never
  re-recorded with newer code; delete them only together with the patch they cover.

Never re-record to make a failing replay pass: the failure means running workflows would break.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "histories"


def _code_dir(argv: list[str]) -> str | None:
    """``--code DIR`` (set by ``--rev``): import ``workflows`` and ``lazarus`` from DIR, an older revision."""
    return argv[argv.index("--code") + 1] if "--code" in argv else None


sys.path[:0] = [p for p in (_code_dir(sys.argv), str(REPO)) if p]

from temporalio.common import SearchAttributeKey  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402

from lazarus.models.search_attributes import SEARCH_ATTRIBUTES  # noqa: E402
from tests.workflows.conftest import register_search_attributes  # noqa: E402
from tests.workflows.scenarios import SCENARIOS, Scenario, Server  # noqa: E402

BIN = Path(sys.executable).parent
CODE = ("workflows", "lazarus", "activities")  # what --rev takes from the older revision
SCENARIO_TIMEOUT_S = 180
_KEYS = {
    "Keyword": SearchAttributeKey.for_keyword,
    "Int": SearchAttributeKey.for_int,
    "KeywordList": SearchAttributeKey.for_keyword_list,
    "Text": SearchAttributeKey.for_text,
    "Bool": SearchAttributeKey.for_bool,
    "Double": SearchAttributeKey.for_float,
    "Datetime": SearchAttributeKey.for_datetime,
}


async def start(server: Server) -> WorkflowEnvironment:
    if server == "time-skipping":
        env = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=str(BIN / "temporal-test-server"), data_converter=pydantic_data_converter
        )
        await register_search_attributes(env.client)
        return env
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(BIN / "temporal"),
        data_converter=pydantic_data_converter,
        search_attributes=[_KEYS[t](name) for name, t in SEARCH_ATTRIBUTES.items()],
        dev_server_extra_args=["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=20"],
    )


async def record(scenarios: list[Scenario], suffix: str) -> list[Path]:
    """Run the scenarios, one server of each kind needed, and write the histories they keep."""
    written: list[Path] = []
    OUT.mkdir(parents=True, exist_ok=True)
    for server in ("time-skipping", "dev"):
        batch = [s for s in scenarios if s.server == server]
        if not batch:
            continue
        env = await start(server)
        try:
            for sc in batch:
                try:
                    runs = await asyncio.wait_for(sc.drive(env), SCENARIO_TIMEOUT_S)
                except Exception as exc:
                    raise SystemExit(f"scenario {sc.name} failed: {type(exc).__name__}: {exc}") from exc
                for name, handle in zip(sc.keeps, runs, strict=True):
                    history = await handle.fetch_history()
                    path = OUT / f"{name}{suffix}.json"
                    path.write_text(history.to_json())
                    written.append(path)
                    print(f"recorded {path.relative_to(REPO)}: {len(history.events)} events")
        finally:
            await env.shutdown()
    return written


def remove_stale(written: list[Path]) -> None:
    """A full run with the current code: current-code histories no scenario records any more are removed."""
    for path in sorted(OUT.glob("*.json")):
        if "@" not in path.stem and path not in written:
            path.unlink()
            print(f"removed {path.relative_to(REPO)}: no scenario records it")


def record_at_revision(rev: str, names: list[str]) -> None:
    """Export ``rev``'s workflows/ and lazarus/ and run this script on them (in a child process)."""
    short = subprocess.run(
        ["git", "rev-parse", "--short=7", f"{rev}^{{commit}}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix=f"lazarus-{short}-") as code:
        archive = subprocess.run(["git", "archive", short, *CODE], cwd=REPO, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", code], input=archive, check=True)
        cmd = [sys.executable, __file__, "--code", code, "--suffix", f"@{short}", *names]
        raise SystemExit(subprocess.run(cmd, cwd=REPO).returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: all)")
    parser.add_argument("--rev", help="record with this git revision's workflow code: <name>@<rev>.json")
    parser.add_argument("--list", action="store_true", help="list the scenarios and what each covers")
    parser.add_argument("--code", help=argparse.SUPPRESS)
    parser.add_argument("--suffix", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    by_name = {s.name: s for s in SCENARIOS}
    if args.list:
        for sc in SCENARIOS:
            kept = f" (keeps {', '.join(sc.keeps)})" if sc.keeps != (sc.name,) else ""
            print(f"{sc.name:32} {sc.server:13} {sc.covers}{kept}")
        return
    unknown = sorted(set(args.scenarios) - set(by_name))
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)} (see --list)")
    if args.rev:
        record_at_revision(args.rev, args.scenarios)
    chosen = [by_name[n] for n in args.scenarios] if args.scenarios else SCENARIOS
    written = asyncio.run(record(chosen, args.suffix))
    if not args.scenarios and not args.suffix:
        remove_stale(written)


if __name__ == "__main__":
    main()
    # The SDK's Rust threads can abort interpreter teardown once the work is done (temporalio/sdk-python#300):
    # skip it, so that a successful recording exits 0.
    sys.stdout.flush()
    os._exit(0)
