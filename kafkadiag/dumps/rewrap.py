"""Lines of a dump that a mail client, an issue tracker or a terminal hard-wrapped.

Wrapped at 72 to 132 columns, a thread header loses its `nid=` and state to the next line, a
long frame is cut in the middle of a class name, a lock line's `(a pkg.Class)` goes to a line of
its own. Each of these leaves the first part visibly unfinished (a header with no `nid=`, a frame
or a lock class without its closing parenthesis), which is what tells a continuation from a
foreign line: a line is only joined to the one before it when that one cannot have ended there.
"""

from __future__ import annotations

import re

from kafkadiag.digits import decimal

# What fold -s and mail clients keep or drop at a break: nothing inside a token, a space (kept at
# the end of the first part, or not) between words.
# State words and the stack address: "condition [0x..]", "Object.wait() [0x..]" (after "in").
_STACK_ADDRESS_TAIL = re.compile(r"^(?:[a-z][a-zA-Z .()]*|Object\.wait\(\)\s*)?\[0x[0-9a-fA-F]+\]\s*$")
_ENDS_WITH_NID = re.compile(r"nid=(?:0x[0-9a-fA-F]*|\d*)\s*$")
# Words a header's state ("waiting on condition", "waiting for monitor entry") cannot end with.
_UNFINISHED_STATE_WORDS = frozenset({"waiting", "on", "for", "monitor", "in"})
# Two words of a frame's location that a break at their space glues together.
_GLUED_WORDS = (("NativeMethod)", "Native Method)"), ("UnknownSource)", "Unknown Source)"))


# The longest line joined back from pieces. A real header, frame or lock line is a few hundred
# characters; without a bound, text that keeps looking unfinished (a header without nid= followed
# by thousands of lines holding prio=, a lock line whose parenthesis never closes) was joined
# into one line, each join copying and rescanning all of it: a 1 MB wrapped header took 19 s.
MAX_REJOINED_CHARS = 16 << 10


def fits(text: str, piece: str) -> bool:
    """`piece` may be joined to `text`: the line they make stays within MAX_REJOINED_CHARS.
    Checked before the tests of `text`, which each scan it."""
    return len(text) + len(piece) <= MAX_REJOINED_CHARS


_REJOINED_NOTE = (
    " line(s) cut by hard wrapping (a mail client, an issue tracker) were joined back to the line before"
)


def rejoined_note(count: int) -> str:
    """The caveat of a dump in which `count` wrapped lines were joined back."""
    return f"{count}{_REJOINED_NOTE}"


def rejoined_count(note: str) -> int | None:
    """The count of a `rejoined_note`, None for any other note (excerpts add theirs up)."""
    count, _, rest = note.partition(" ")
    return decimal(count) if " " + rest == _REJOINED_NOTE else None


# JRockit's fields: `id=1 idx=0x4 tid=11648`, `id=0x80 pid=13184`, `id=0x80 tid=0x104c`.
_JROCKIT_FIELDS = re.compile(r" id=(?:0x[0-9a-fA-F]+|\d+|\?) (?:idx=|pid=|tid=)")


def header_unfinished(header: str) -> bool:
    """A thread header cut before its `nid=...` and state (JDK 6+ print both on every thread)."""
    if header.count('"') < 2:
        return True
    if " Id=" in header:
        # ThreadInfo.toString() carries no nid; "BLOCKED on X owned by "Y" Id=N" may be cut.
        stripped = header.rstrip()
        return stripped.endswith((" on", " owned by", " Id=", '"')) or header.count('"') % 2 == 1
    if _JROCKIT_FIELDS.search(header):
        return False  # JRockit prints no nid=: its header is whole without one
    if "nid=" not in header or _ENDS_WITH_NID.search(header) is not None:
        return True
    # "... nid=0x49cd waiting on" | "condition": the state words, cut.
    return "[0x" not in header and header.rsplit(None, 1)[-1] in _UNFINISHED_STATE_WORDS


def header_continues(header: str, line: str) -> bool:
    """`line` is what hard wrapping cut off `header`, not a line of another kind.

    A HotSpot header cut short is followed by the rest of its fields or its state words; other
    formats' headers (JRockit's has no nid=) are followed by lines of their own.
    """
    if header_tail(line):
        return True
    if not header_unfinished(header):
        return False
    if any(field in line for field in ("nid=", "tid=", "prio=")):
        return True
    # "... nid=0x49cd waiting on" | "condition"
    return "nid=" in header and line.strip()[:1].islower()


# A header cut inside its stack address ("... waiting on condition [0x00" | "007f58316ae000]"), as
# trackers that wrap at a fixed column do (KAFKA-914): the two parts are one token.
_ADDRESS_CUT = re.compile(r"\[(?:0x?)?[0-9a-fA-F]*$")
_ADDRESS_REST = re.compile(r"^(?:0?x)?[0-9a-fA-F]*\]$")
_WHOLE_ADDRESS = re.compile(r"\[0x[0-9a-fA-F]+\]$")


def address_rejoined(header: str, line: str) -> str | None:
    """The header with the rest of its cut stack address, when `line` is that rest."""
    first = header.rstrip()
    rest = line.strip()
    if _ADDRESS_CUT.search(first) is None or _ADDRESS_REST.match(rest) is None:
        return None
    joined = first + rest
    return joined if _WHOLE_ADDRESS.search(joined) else None


def header_tail(line: str) -> bool:
    """The stack address (and state words) of a header cut before them."""
    return _STACK_ADDRESS_TAIL.match(line.strip()) is not None


def unbalanced(text: str) -> bool:
    """A frame, lock or state line whose parenthesis was opened and not closed."""
    return text.count("(") > text.count(")")


def frame_unfinished(text: str) -> bool:
    """A frame cut before its location or inside it: every frame ends with `(...)`."""
    return "(" not in text or unbalanced(text)


def agent_frame_unfinished(text: str) -> bool:
    """A serviceability-agent frame cut short: every one ends `@bci=N[, line=L] (... frame)`."""
    stripped = text.rstrip()
    return unbalanced(stripped) or " @bci=" not in stripped or not stripped.endswith(")")


def lock_class_missing(text: str) -> bool:
    """A lock line cut after its `<0x...>`: the `(a pkg.Class)` always follows one."""
    stripped = text.rstrip()
    return stripped.endswith(">") and "<0x" in stripped and "(a " not in stripped


def join_words(first: str, rest: str) -> str:
    """A header or state cut at a space: one space between the parts."""
    return first.rstrip() + " " + rest.strip()


def join_token(first: str, rest: str) -> str:
    """A frame or class name cut anywhere: glued back, unless the break was at a space."""
    rest = rest.strip()
    # "<0x..> (a pkg.Class)" cut at one of its two spaces, or
    # "(a java.lang.Class for java.lang.Shutdown)": the one class name with spaces in it.
    if first.endswith((" ", "(a", " for")) or (first.endswith(">") and rest.startswith("(")):
        joined = first.rstrip() + " " + rest
    else:
        joined = first + rest
    for glued, spaced in _GLUED_WORDS:
        if joined.endswith(glued):
            joined = joined[: -len(glued)] + spaced
    return joined
