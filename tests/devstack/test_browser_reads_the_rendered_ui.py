"""What the UI test and the screenshot script read from a page Chromium rendered: its visible text, and the
Markdown the Temporal UI shows in frames of its own (user metadata), which is not part of the page's text."""

from __future__ import annotations

from lazarus.devstack.browser import embedded_markdown, run_url, visible_text

FRAME = (
    '<iframe class="block" title="output" src="/render?content=**Nodes%20at%20start**%20node1%2Cnode2%20(2)'
    '&amp;theme=light&amp;compact=false" id="user-metadata-details" height="106"></iframe>'
)


def test_the_visible_text_leaves_out_scripts_styles_and_tags():
    dom = "<html><head><style>p{color:red}</style><script>var x = '<b>';</script></head>"
    dom += "<body><p>Signal Name</p>\n  <span>attempt_started</span> &amp; more</body></html>"
    assert visible_text(dom) == "Signal Name attempt_started & more"


def test_markdown_in_the_ui_s_own_frames_is_read_from_their_source():
    assert embedded_markdown(f"<div>{FRAME}<iframe id='x'></iframe></div>") == {
        "user-metadata-details": "**Nodes at start** node1,node2 (2)"
    }
    assert "Nodes at start" not in visible_text(FRAME)


def test_a_run_s_page_is_addressed_by_workflow_run_and_tab():
    assert (
        run_url("http://127.0.0.1:8233/", "default", "lazarus-dev-7", "r1", "timeline")
        == "http://127.0.0.1:8233/namespaces/default/workflows/lazarus-dev-7/r1/timeline"
    )
