"""Lock lines (`- waiting to lock <0x..> (a pkg.Lock)` and their other spellings) -> kind, id, class."""

from __future__ import annotations

import re

from kafkadiag.dumps.hotspot.syntax import SYNCHRONIZERS_INDENTED
from kafkadiag.model import (
    LockEventKind,
)

# The words before "<" on a lock line, exactly as HotSpot prints them; other spellings fall back to
# a prefix match.
_EVENT_WORDS = {
    "locked": LockEventKind.LOCKED,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting on": LockEventKind.WAITING_ON,
    "parking to wait for": LockEventKind.PARKING,
    "waiting to re-lock in wait()": LockEventKind.WAITING_TO_RELOCK,
    "eliminated": LockEventKind.ELIMINATED,
}


def parse_lock_id(text: str) -> int | None:
    """`<0x0000000412c8bb80>` or `<7f39d3e70>` (lock ids are always hex) -> int."""
    inner = text.strip("<>\\")  # also "\<0x..\>": see _MARKDOWN_ESCAPED_ANGLE
    try:
        return int(inner, 16)
    except ValueError:
        return None


# Dumps pasted through Markdown renderers come back with "\<0x..\>" for "<0x..>" (the Apache
# Yetus release notes of JIRA issues, for one): the backslashes are markup, not part of the id.
_MARKDOWN_ESCAPED_ANGLE = ("\\<", "\\>")


def parse_lock_line(body: str) -> tuple[LockEventKind | None, int | None, str | None]:
    """`- waiting to lock <0x..> (a java.lang.Object)` -> (kind, id, class)."""
    if _MARKDOWN_ESCAPED_ANGLE[0] in body:
        body = body.replace(_MARKDOWN_ESCAPED_ANGLE[0], "<").replace(_MARKDOWN_ESCAPED_ANGLE[1], ">")
    arrow = body.find(" <-")
    if arrow > 0:
        # An arrow after the lock: a person's "<--- here", Arthas' `thread -b` "<---- but blocks
        # 4 other threads!". A lock's own "<" is followed by its address or a word, never "-".
        body = body[:arrow]
    words, angle, rest = body[2:].partition("<")
    words = words.strip()
    if not angle:
        threadinfo = _THREADINFO_LOCK.match(words)
        if threadinfo:
            return _THREADINFO_KINDS[threadinfo["kind"]], int(threadinfo["hash"], 16), threadinfo["class"]
    kind = _EVENT_WORDS.get(words)
    if kind is None:
        kind = _kind_by_prefix(words)
    lock_id: int | None = None
    lock_class: str | None = None
    if angle:
        inner, closing, after = rest.partition(">")
        if closing:
            try:
                lock_id = int(inner, 16)  # always hex; "0x" optional (OS X JDK 6 omits it)
            except ValueError:
                lock_id = None  # "<no object reference available>", "<owner is scalar replaced>"
            # jhsdb jstack --locks lists a synchronizer as "<0x..>, (a java/util/...)"
            after = after.lstrip(", ")
            if after.startswith("("):
                # "(a pkg.Lock)", and in VisualVM's rendering `(a pkg.Lock) owned by "x" t@3`
                end = after.find(")")
                lock_class = after[1:end] if end > 0 else None
                if lock_class and lock_class.startswith("a "):
                    lock_class = lock_class[2:]
                if lock_class and "/" in lock_class and "." not in lock_class:
                    # The serviceability agent prints the JVM's internal name, java/util/...; a
                    # hidden class (pkg.App$$Lambda/0x0000000800c0a000) keeps its slash.
                    lock_class = lock_class.replace("/", ".")
    elif kind is LockEventKind.WAITING_ON and " for " in words:
        # JDK 17+: "- waiting on the Class initialization monitor for pkg.Type"
        lock_class = words.rsplit(" for ", 1)[1]
    return kind, lock_id, lock_class


# ThreadInfo.toString(): "-  locked java.lang.Object@1b6d3586", "-  blocked on ...", "-  waiting on
# ..." (for Object.wait() and LockSupport.park alike; the status sorts them out). The id is the
# identity hash, which is all a lock graph needs. Tools that render ThreadInfo in jstack's words
# print "- waiting to lock pkg.Lock@39faacaf" and "- locked on pkg.Lock@19484faf".
_THREADINFO_LOCK = re.compile(
    r"^(?:(?P<kind>locked(?: on)?|blocked on|waiting on|waiting to lock|waiting to re-lock in wait\(\)"
    r"|parking to wait for) )?(?P<class>[\w.$\[\];]+)@(?P<hash>[0-9a-fA-F]+)$"
)
_THREADINFO_KINDS = {
    "locked": LockEventKind.LOCKED,
    "locked on": LockEventKind.LOCKED,
    "blocked on": LockEventKind.WAITING_TO_LOCK,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting to re-lock in wait()": LockEventKind.WAITING_TO_RELOCK,
    "waiting on": LockEventKind.WAITING_ON,
    "parking to wait for": LockEventKind.PARKING,
    None: LockEventKind.LOCKED,  # an entry of "Number of locked synchronizers = N"
}


def _kind_by_prefix(words: str) -> LockEventKind | None:
    for spelled, kind in _EVENT_WORDS.items():
        if words.startswith(spelled.split(" in ")[0]):
            return kind
    return None


# A lock line's kind, lock id and class, and its text as quoted (stripped): lock events of the
# threads that print the same lock line share one string.
ParsedLockLine = tuple[LockEventKind | None, int | None, str | None, str]

# The two lines of the synchronizer section that every thread of a `jstack -l` dump prints, told
# apart by identity in the lock-line cache: one look-up serves them and lock lines alike.
# (Built at run time: equal constant tuples would be one object.)
SYNCHRONIZERS_HEADING: ParsedLockLine = tuple([None, None, None, ""])  # type: ignore[assignment]
NO_SYNCHRONIZER: ParsedLockLine = tuple([None, None, None, ""])  # type: ignore[assignment]
STRUCTURE_LINES = {SYNCHRONIZERS_INDENTED: SYNCHRONIZERS_HEADING, "\t- None": NO_SYNCHRONIZER}
