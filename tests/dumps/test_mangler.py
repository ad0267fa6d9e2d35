"""Every captured dump, in the forms people paste it, reads as the same threads with the same findings.

The forms come from tests/dumps/mangle.py: hard-wrapped at 72 to 132 columns (with and without
the trailing spaces mail clients drop), quoted in an e-mail reply (also after wrapping), fenced in
Markdown (also with the fences typed on the dump's first and last lines, as a Jira {code:java} tag
may be), copied from a rendered Jira page (HTML entities), saved as an HTML page's source (a
blog's highlighted block on one line, also with its tabs dropped; a <pre> block; a <div> per line;
an HTML mail's <br> per line), CRLF line ends,
UTF-16 and UTF-8 with a byte-order mark. A repair that changes what was read must be said:
wrapped lines leave a caveat.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkadiag.collect.dumpfiles import reading_caveats
from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.lines import MAX_LINE_CHARS, ReadStats
from kafkadiag.model import DumpFormat, ThreadDump
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED
from . import mangle

JAVA_FILES = sorted(
    path
    for path in CAPTURED.glob("*/*")
    if path.suffix in (".txt", ".log") and not path.parent.name.startswith("py")
)
PYSPY_TEXT_FILES = sorted(path for path in CAPTURED.glob("py*/*.txt"))

Form = Callable[[str], "str | bytes"]
FORMS: dict[str, Form] = {
    "wrapped-72-trailing-spaces-dropped": lambda text: mangle.hard_wrap(text, 72, strip_trailing=True),
    "wrapped-80": lambda text: mangle.hard_wrap(text, 80),
    "wrapped-100": lambda text: mangle.hard_wrap(text, 100),
    "wrapped-132-trailing-spaces-dropped": lambda text: mangle.hard_wrap(text, 132, strip_trailing=True),
    "email-quoted": mangle.email_quoted,
    "email-quoted-after-wrapping-at-76": lambda text: mangle.email_quoted(
        mangle.hard_wrap(text, 76, strip_trailing=True)
    ),
    "markdown-fenced": mangle.markdown_fenced,
    "markdown-fenced-glued": mangle.markdown_fenced_glued,
    "jira-code-glued": mangle.jira_code_glued,
    "markdown-indented": mangle.markdown_indented,
    "markdown-indented-in-prose": mangle.markdown_indented_in_prose,
    "jira-code-rendered": mangle.jira_code_rendered,
    "html-page-highlighted": mangle.html_page_highlighted,
    "html-page-highlighted-tabs-dropped": lambda text: mangle.html_page_highlighted(text, drop_tabs=True),
    "html-page-pre": mangle.html_page_pre,
    "html-mail": mangle.html_mail,
    "html-div-lines": mangle.html_div_lines,
    "crlf": mangle.crlf,
    "utf-16-with-bom": mangle.utf16_with_bom,
    "utf-8-with-bom": mangle.utf8_with_bom,
}
# Every form, for py-spy's text too: its wrapped lines are rejoined (kafkadiag/dumps/pyspyrewrap.py).
PYSPY_FORMS = tuple(sorted(FORMS))


def what_was_read(dumps: list[ThreadDump]) -> list[tuple]:
    """Everything a diagnosis rests on, per thread: identity, state, frames, lock relations."""
    return [
        (
            thread.name,
            thread.state,
            thread.nid,
            tuple(frame.function for frame in thread.frames),
            tuple((event.kind, event.lock_id, event.lock_class) for event in thread.lock_events),
            thread.held_synchronizers,
        )
        for dump in dumps
        for thread in dump.threads
    ]


def findings_of(dumps: list[ThreadDump]) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((finding.rule, finding.threads) for finding in analyze(dumps).findings)


def mangled(path: Path, form: str, tmp_path: Path) -> list[ThreadDump]:
    out = FORMS[form](path.read_text(encoding="utf-8"))
    target = tmp_path / f"{path.parent.name}-{path.name}"
    target.write_bytes(out if isinstance(out, bytes) else out.encode("utf-8"))
    return list(read_dumps(str(target)))


def _ids(paths: list[Path]) -> list[str]:
    return [f"{path.parent.name}/{path.name}" for path in paths]


def _wrapped(form: str) -> bool:
    return form.startswith("wrapped") or "wrapping" in form


def _hotspot_layout(path: Path) -> bool:
    """jstack, jcmd Thread.print, kill -3, VisualVM: the layouts whose wrapped lines are rejoined."""
    return next(read_dumps(str(path))).format in (DumpFormat.HOTSPOT, DumpFormat.NETBEANS)


def _hotspot_only(form: str) -> bool:
    """Forms only the HotSpot layouts' parser reads: wrapped lines (rejoined there), a dump
    indented among flush-left prose (its indent learned there like a log prefix; a dump indented
    on its own is dedented for every format) and frames whose tab was dropped (read flush left
    there; py-spy's and the other layouts' indents carry meaning)."""
    return _wrapped(form) or form in ("markdown-indented-in-prose", "html-page-highlighted-tabs-dropped")


def _one_line_over_the_limit(path: Path, form: str) -> bool:
    """A highlighted page holds the whole dump on one source line; a line over 1 MiB is cut by the
    reader, with a caveat (test_a_highlighted_page_over_the_line_limit_is_cut_with_a_caveat)."""
    if not form.startswith("html-page-highlighted"):
        return False
    return len(FORMS[form](path.read_text(encoding="utf-8"))) > MAX_LINE_CHARS


CASES = [
    (path, form)
    for path in JAVA_FILES
    for form in sorted(FORMS)
    if (not _hotspot_only(form) or _hotspot_layout(path)) and not _one_line_over_the_limit(path, form)
]


@pytest.mark.parametrize(
    ("path", "form"), CASES, ids=[f"{path.parent.name}/{path.name}-{form}" for path, form in CASES]
)
def test_java_dump_reads_the_same_in_every_pasted_form(path: Path, form: str, tmp_path: Path) -> None:
    original = list(read_dumps(str(path)))
    pasted = mangled(path, form, tmp_path)
    assert what_was_read(pasted) == what_was_read(original)
    assert findings_of(pasted) == findings_of(original)


def _pyspy_text(path: Path) -> bool:
    return next(read_dumps(str(path))).format is DumpFormat.PYSPY


# The other Python renderings (faulthandler, traceback, gdb, gevent, asyncio) are not rejoined
# when wrapped: only py-spy's layout marks every continuation (see pyspyrewrap).
PYTHON_CASES = [
    (path, form)
    for path in PYSPY_TEXT_FILES
    for form in PYSPY_FORMS
    if not _hotspot_only(form) or (_wrapped(form) and _pyspy_text(path))
]


@pytest.mark.parametrize(
    ("path", "form"),
    PYTHON_CASES,
    ids=[f"{path.parent.name}/{path.name}-{form}" for path, form in PYTHON_CASES],
)
def test_pyspy_dump_reads_the_same_in_pasted_forms(path: Path, form: str, tmp_path: Path) -> None:
    original = list(read_dumps(str(path)))
    pasted = mangled(path, form, tmp_path)
    assert what_was_read(pasted) == what_was_read(original)
    assert findings_of(pasted) == findings_of(original)


@pytest.mark.parametrize("width", [72, 80, 100])
def test_rejoined_lines_are_a_caveat_of_the_analysis(width: int, tmp_path: Path) -> None:
    path = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    target = tmp_path / "wrapped.txt"
    target.write_text(mangle.hard_wrap(path.read_text(encoding="utf-8"), width, strip_trailing=True))
    report = analyze(list(read_dumps(str(target))))
    rejoined = [caveat for caveat in report.caveats if "cut by hard wrapping" in caveat]
    assert len(rejoined) == 1
    assert report.verdict.startswith("Stalled")  # the stall is still found, caveat or not


def test_an_unwrapped_dump_has_no_rejoin_caveat() -> None:
    report = analyze(list(read_dumps(str(CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"))))
    assert not [caveat for caveat in report.caveats if "hard wrapping" in caveat]


def test_a_highlighted_page_over_the_line_limit_is_cut_with_a_caveat(tmp_path: Path) -> None:
    # GIVEN the 50-dump kill -3 log as a blog's highlighted block: one source line of over 1 MiB
    path = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "kill3-50-dumps.log.gz"
    page = tmp_path / "page.html"
    log = gzip.decompress(path.read_bytes()).decode("utf-8")
    page.write_text(mangle.html_page_highlighted(log), encoding="utf-8")
    # WHEN it is read
    stats = ReadStats()
    dumps = list(read_dumps(str(page), stats=stats))
    # THEN what fits in the first MiB is read, and both the cut and the page's reading are said
    assert 0 < len(dumps) < len(list(read_dumps(str(path))))
    caveats = reading_caveats(str(page), stats)
    assert any("1 line(s) over 1 MiB were cut" in caveat for caveat in caveats)
    assert any("an HTML page, read as its text" in caveat for caveat in caveats)
