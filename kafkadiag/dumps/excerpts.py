"""Excerpts of one dump pasted apart are one dump.

A bug report rarely carries a whole dump: it carries the thread that holds a lock, some prose,
one of the threads waiting for it, "[snip]", and so on. The HotSpot parser ends a fragment (a
part without the `Full thread dump` banner) at the first line of prose, so each excerpt arrives
as a dump of its own, and a lock held in one excerpt and awaited in another would never be
related. Consecutive fragments of one source are joined back into one dump here.

A reporter's own labels between the excerpts ("[t1]", "[td2]" alone on a line, as KAFKA-914 and
KAFKA-916 number theirs) are annotations, not text of the dump: like "..." they neither end the
excerpt nor are they a continuation of a wrapped line before them.

They are not joined when a thread appears in both: that is what an application logging every
thread's ThreadInfo now and then looks like, and each of those is a snapshot of its own. Nor when
both hold a thread a JVM has only one of ("main", "Signal Dispatcher"), whatever its ids: those
are two dumps, of two JVMs or of one JVM at two moments (a page comparing two runs).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.rewrap import rejoined_count, rejoined_note
from kafkadiag.model import Thread, ThreadDump

# "[t2]", "[td1]", "[T-3]", "[2]:": a short tag in brackets, alone on its line.
_LABEL = re.compile(r"^\[[A-Za-z]{0,8}[-_ ]?\d{1,4}[a-z]?\]:?$")
# How people mark what they cut out of a pasted dump.
_ELISIONS = frozenset({"...", "[...]", "(...)", "\u2026", "[\u2026]"})


def is_annotation(line: str) -> bool:
    """An elision ("...") or a reporter's label ("[t2]") between excerpts of one dump."""
    stripped = line.strip()
    return stripped in _ELISIONS or (stripped[:1] == "[" and _LABEL.match(stripped) is not None)


def headerless_name(line_no: int) -> str:
    """The name a thread gets whose header the excerpt left out: where its stack starts."""
    return f"(no header, line {line_no})"


_FRAGMENT_NOTE = "fragment: no 'Full thread dump' banner before the first thread"
# Unparsed lines kept for display, as for any one dump; all of them are counted.
_UNPARSED_KEPT = 200


def join_excerpts(dumps: Iterable[ThreadDump]) -> Iterator[ThreadDump]:
    """Yield `dumps` with runs of joinable fragments merged; indexes renumbered in order."""
    run: list[ThreadDump] = []
    index = 0
    for dump in dumps:
        if run and _joinable(run, dump):
            run.append(dump)
            continue
        if run:
            yield _joined(run, index)
            index += 1
        run = [dump]
    if run:
        yield _joined(run, index)


def _is_fragment(dump: ThreadDump) -> bool:
    return dump.banner is None


def _joinable(run: list[ThreadDump], dump: ThreadDump) -> bool:
    if not (_is_fragment(run[0]) and _is_fragment(dump)) or dump.source != run[0].source:
        return False
    seen = {_identity(thread) for part in run for thread in part.threads}
    if any(_identity(thread) in seen for thread in dump.threads):
        return False
    singletons = {name for name, _ in seen if name in JVM_SINGLETONS}
    return not any(thread.name in singletons for thread in dump.threads)


# Threads every HotSpot JVM starts once (JDK 5 to 25): a second one is another JVM's, or another dump's.
JVM_SINGLETONS = frozenset(
    {
        "main",
        "DestroyJavaVM",
        "Reference Handler",
        "Finalizer",
        "Signal Dispatcher",
        "Attach Listener",
        "Common-Cleaner",
        "Service Thread",
        "Monitor Deflation Thread",
        "Notification Thread",
        "VM Thread",
        "VM Periodic Task Thread",
        "Sweeper thread",
    }
)


def _identity(thread: Thread) -> tuple[str, int | None]:
    """Name and the best id the header has: equally named pool threads are distinct threads."""
    fields = thread.fields
    return thread.name, fields.nid if fields.nid is not None else fields.java_id


def _joined(run: list[ThreadDump], index: int) -> ThreadDump:
    first = run[0]
    if len(run) == 1:
        return first if first.index == index else dataclasses.replace(first, index=index)
    notes = list(
        dict.fromkeys(
            note
            for part in run
            for note in part.notes
            if note != _FRAGMENT_NOTE and rejoined_count(note) is None
        )
    )
    # Each part counts the wrapped lines it joined back: one caveat says how many in all.
    rejoined = sum(count for part in run for note in part.notes if (count := rejoined_count(note)))
    if rejoined:
        notes.append(rejoined_note(rejoined))
    spans = ", ".join(f"{part.line_no}-{part.end_line_no}" for part in run)
    notes.insert(
        0,
        f"excerpts: {len(run)} parts without a 'Full thread dump' banner (lines {spans}) were read "
        "as one dump; the threads between them are not in the input",
    )
    unparsed = tuple(line for part in run for line in part.unparsed)
    return dataclasses.replace(
        first,
        index=index,
        end_line_no=run[-1].end_line_no,
        threads=tuple(thread for part in run for thread in part.threads),
        timestamp=next((part.timestamp for part in run if part.timestamp), None),
        producer=next((part.producer for part in run if part.producer), None),
        pid=next((part.pid for part in run if part.pid is not None), None),
        jvm_deadlocks=tuple(cycle for part in run for cycle in part.jvm_deadlocks),
        jni_global_refs=next((part.jni_global_refs for part in run if part.jni_global_refs), None),
        unparsed=unparsed[:_UNPARSED_KEPT],
        unparsed_count=sum(part.unparsed_count for part in run),
        truncated=run[-1].truncated,
        has_lock_data=any(part.has_lock_data for part in run),
        notes=tuple(notes),
        log_signals=tuple(signal for part in run for signal in part.log_signals),
        os_threads=tuple(row for part in run for row in part.os_threads),
    )
