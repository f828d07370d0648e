"""A long wait shows one progress line on a terminal's stderr, redrawn in place and erased when the wait
ends; a quick answer draws nothing; a pipe, a file or --json never sees it."""

from __future__ import annotations

import io
import os
import time

import pytest

from lazarus.cli import progress
from lazarus.cli.progress import ERASE, waiting


@pytest.fixture
def terminal():
    """A real pseudo-terminal: the stream to write to, and a reader of what reached the terminal."""
    main_fd, side_fd = os.openpty()
    stream = os.fdopen(side_fd, "w", encoding="utf-8")

    def shown() -> str:
        stream.flush()
        chunks = []
        os.set_blocking(main_fd, False)
        while True:
            try:
                chunk = os.read(main_fd, 4096)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()

    yield stream, shown
    stream.close()
    os.close(main_fd)


def test_a_long_wait_shows_what_it_waits_for_and_the_seconds_and_erases_it(terminal, monkeypatch):
    stream, shown = terminal
    monkeypatch.setattr(progress, "DELAY_S", 0.05)
    monkeypatch.setattr(progress, "INTERVAL_S", 0.05)
    with waiting("waiting for Lazarus to pick up job 14", stream=stream) as wait:
        time.sleep(0.3)
        wait.say("waiting for Lazarus to pick up job 14, again")
        time.sleep(0.2)
    text = shown()
    assert f"{ERASE}waiting for Lazarus to pick up job 14... 0 s" in text
    assert f"{ERASE}waiting for Lazarus to pick up job 14, again... 0 s" in text
    assert text.endswith(ERASE)  # the next line the command prints starts clean


def test_a_quick_answer_draws_nothing(terminal):
    stream, shown = terminal
    with waiting("waiting for the workflow of job 14 to answer", stream=stream):
        pass
    assert shown() == ""


def test_nothing_is_drawn_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    piped = io.StringIO()
    with waiting("starting the embedded stack", stream=piped):
        time.sleep(0.1)
    assert piped.getvalue() == ""


def test_nothing_is_drawn_with_json(terminal, monkeypatch):
    stream, shown = terminal
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    with waiting("starting the embedded stack", quiet=True, stream=stream):
        time.sleep(0.1)
    assert shown() == ""


def test_the_line_is_erased_when_the_wait_fails(terminal, monkeypatch):
    stream, shown = terminal
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    with pytest.raises(RuntimeError), waiting("waiting", stream=stream):
        time.sleep(0.1)
        raise RuntimeError("Temporal went away")
    assert shown().endswith(ERASE)


def test_text_from_a_job_cannot_drive_the_terminal(terminal, monkeypatch):
    stream, shown = terminal
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    with waiting("waiting for job \x1b]0;owned\x07", stream=stream):
        time.sleep(0.1)
    assert "\x1b]0;" not in shown()
