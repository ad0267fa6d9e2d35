"""A dump inside an HTML page's source (a blog's generated page, a tracker's page saved from the
browser) is read as the page's text; anything else that holds a '<' is not taken for a page.

The pasted-form equivalence over every captured fixture is in test_mangler.py (forms
html-page-highlighted, html-page-highlighted-tabs-dropped, html-page-pre); these tests pin the
edges of recognising a page.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.collect.dumpfiles import reading_caveats
from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.htmltext import PageText
from kafkadiag.dumps.lines import ReadStats

from ..conftest import CAPTURED
from . import mangle
from .reading import what_was_read

JSTACK = CAPTURED / "deadlock" / "jstack-l.txt"


def test_a_page_is_read_as_its_text_and_said_so(tmp_path: Path) -> None:
    # GIVEN a captured jstack -l saved inside a blog page's highlighted block
    page = tmp_path / "post.html"
    page.write_text(mangle.html_page_highlighted(JSTACK.read_text(encoding="utf-8")), encoding="utf-8")
    # WHEN it is read
    stats = ReadStats()
    list(read_dumps(str(page), stats=stats))
    # THEN the threads are the dump's, and the analysis says it read a page's text
    assert what_was_read(page) == what_was_read(JSTACK)
    assert any("an HTML page, read as its text" in caveat for caveat in reading_caveats(str(page), stats))


def test_a_dump_whose_log_holds_markup_is_not_a_page(tmp_path: Path) -> None:
    # GIVEN a dump followed by an application log line that quotes an HTML response
    dump = tmp_path / "dump.txt"
    dump.write_text(
        JSTACK.read_text(encoding="utf-8")
        + "\nWARN client got <html><body><p>502 Bad Gateway</p></body></html>\n",
        encoding="utf-8",
    )
    # WHEN it is read
    stats = ReadStats()
    list(read_dumps(str(dump), stats=stats))
    # THEN it is read as the dump it is: its first line is no tag
    assert not stats.html_page
    assert what_was_read(dump) == what_was_read(JSTACK)


def test_only_html_tags_are_dropped() -> None:
    # GIVEN a page line that left a constructor frame unescaped, beside real markup
    line = '<span class="line">\tat java.lang.Thread.<init>(Thread.java:619)</span><br><span>- None</span>'
    # WHEN its text is taken
    text = PageText()([line])
    # THEN '<init>' is kept, the spans are gone and <br> breaks the line
    assert text == ["\tat java.lang.Thread.<init>(Thread.java:619)", "- None"]


def test_non_breaking_spaces_are_the_indents_they_stand_for() -> None:
    # as entities, and as the character itself on a line without markup
    assert PageText()(["&nbsp;&nbsp;&nbsp;java.lang.Thread.State: &quot;WAITING&quot;<br>"]) == [
        '   java.lang.Thread.State: "WAITING"'
    ]
    assert PageText()(["\xa0\xa0\xa0java.lang.Thread.State: WAITING"]) == [
        "   java.lang.Thread.State: WAITING"
    ]


def test_breaks_are_where_the_browser_shows_them() -> None:
    # a run of block tags is one line end, a <br> with attributes is one too, a source line's own
    # newline is the break at its edges, and a line of tags alone shows nothing
    assert PageText()(['<div class="line">\tat a.B.c(B.java:1)</div><div class="line">- None</div>']) == [
        "\tat a.B.c(B.java:1)",
        "- None",
    ]
    assert PageText()(['one<br class="x">two<br/>', "</pre>", "<div>", "three<br><br>four"]) == [
        "one",
        "two",
        "three",
        "",
        "four",
    ]


def test_a_page_saved_by_the_browser_starts_with_a_comment(tmp_path: Path) -> None:
    page = tmp_path / "saved.html"
    page.write_text(
        "<!-- saved from url=(0042)https://issues.example.org/browse/X-1 -->\n"
        + mangle.html_page_pre(JSTACK.read_text(encoding="utf-8")),
        encoding="utf-8",
    )
    assert what_was_read(page) == what_was_read(JSTACK)


def test_scripts_and_styles_of_a_page_are_not_text() -> None:
    # GIVEN a page whose head holds a style sheet and whose body a script spanning lines and batches
    shown = PageText()
    first = shown(["<html><head><style>pre { color: red; }</style>", "<script>", "var a = 1;", ""])
    second = shown(["if (a < 2) {}</script><pre>", '"main" #1 prio=5 tid=0x1 nid=0x2 runnable</pre>'])
    # THEN none of their content is a line of the text, and the dump's line is
    assert [line for line in first + second if line.strip()] == ['"main" #1 prio=5 tid=0x1 nid=0x2 runnable']


def test_table_cells_are_apart_as_the_browser_shows_them() -> None:
    # GIVEN `top -H` rows pasted into an HTML table, one row per line
    row = "<tr><td>12345</td><td>root</td><td>99.7</td><td>java</td></tr>"
    # THEN the cells are separated as a copy from the page separates them, by tabs
    assert PageText()([row]) == ["12345\troot\t99.7\tjava"]


def test_only_real_script_and_style_tags_hide_text() -> None:
    dump_line = '"worker-2" #13 prio=5 tid=0x3 nid=0x4 runnable</pre>'
    # GIVEN tags that look like a script or a style sheet but hide nothing in a browser
    for before in (
        '<!-- analytics disabled: <script src="a.js"> -->',  # inside a comment
        '<script src="/s/batch.js"/>',  # self-closing
        "<style-guide>house rules</style-guide>",  # another element
        "<pre>\tat com.example.Render.apply(<Style object at 0x7f>)",  # a frame's argument
    ):
        # THEN the dump after them is still text
        assert '"worker-2" #13 prio=5 tid=0x3 nid=0x4 runnable' in PageText()([before, "<pre>" + dump_line])
