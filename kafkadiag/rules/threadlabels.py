"""How findings name threads: by name, told apart by OS thread id when several share a name.

A thread name is not an identity: pools, frameworks and careless code give many threads the same
name ("worker", "pool-1-thread-1" in two class loaders). A finding that said "worker waits for
worker" would fold distinct threads into one, so a name shared within a dump is followed by the
thread's nid (or its Java thread number, or the header's line when the dump has neither).
"""

from __future__ import annotations

from collections import Counter

from kafkadiag.model import Thread, ThreadDump


def shared_names(dump: ThreadDump) -> frozenset[str]:
    """Names that more than one thread of the dump has."""
    counts = Counter(thread.name for thread in dump.threads)
    return frozenset(name for name, count in counts.items() if count > 1)


def label(thread: Thread, shared: frozenset[str]) -> str:
    if thread.name not in shared:
        return thread.name
    if thread.nid is not None:
        return f"{thread.name} (nid 0x{thread.nid:x})"
    if thread.java_id is not None:
        return f"{thread.name} (#{thread.java_id})"
    return f"{thread.name} (line {thread.line_no})"
