"""KD404: two Python threads each blocked on a lock the other's frame also holds a reference to."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

LOCK_ADDRESS = re.compile(r"<_thread\.(?:R?[Ll]ock|lock) (?:object )?at (0x[0-9a-fA-F]+)>")


def lock_locals(thread: Thread) -> dict[int, str]:
    """Lock objects named in the thread's top application frame: address -> variable name."""
    application = python.first_application_frame(thread)
    if application is None:
        return {}
    found = {}
    for variable in thread.frames[application].locals:
        match = LOCK_ADDRESS.search(variable.value)
        if match:
            found[int(match.group(1), 16)] = variable.name
    return found


def blocked_acquiring(thread: Thread) -> bool:
    """Idle with application code on top: a `with lock:` or lock.acquire() that does not return."""
    if thread.active:
        return False
    frames = python.python_frames(thread)
    return (
        bool(frames) and not python.is_library_frame(frames[0][1]) and not python.is_waiting_for_work(thread)
    )


class PythonLockOrderInversion(Rule):
    code = "KD404"
    name = "python-lock-order-inversion"
    title = "Python threads blocked on each other's locks (lock-order inversion)"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON, Requirement.PYSPY_LOCALS})
    explanation = """
Two threads are stopped in application code with the same two locks among their locals, in
swapped roles (thread A's first lock is thread B's second): the signature of A holding one lock
and waiting for the other while B does the opposite. py-spy shows no lock owners, so this is read
from the stacks and --locals; the quoted frames show where each thread stopped.
"""
    remedy = """
Take the locks in one fixed order everywhere (e.g. by an id), or use one lock for both resources;
acquire with a timeout and back off to break a deadlock at run time.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        candidates = [(t, lock_locals(t)) for t in dump.threads if blocked_acquiring(t)]
        candidates = [(t, locks) for t, locks in candidates if len(locks) >= 2]
        reported: set[frozenset[int]] = set()
        for position, (first, first_locks) in enumerate(candidates):
            for second, second_locks in candidates[position + 1 :]:
                shared = set(first_locks) & set(second_locks)
                if len(shared) < 2:
                    continue
                roles_swapped = any(first_locks[a] != second_locks[a] for a in shared)
                if not roles_swapped:
                    continue
                pair = frozenset({id(first), id(second)})
                if pair in reported:
                    continue
                reported.add(pair)
                evidence = []
                for thread in (first, second):
                    evidence.append(context.header(thread))
                    application = python.first_application_frame(thread)
                    if application is not None:
                        evidence.append(context.frame(thread, application))
                locks = ", ".join(
                    f"0x{address:x} ({first_locks[address]} in {first.name}, "
                    f"{second_locks[address]} in {second.name})"
                    for address in sorted(shared)
                )
                yield self.finding(
                    f"{first.name} and {second.name} are stopped in application code with the same locks in "
                    f"swapped roles: {locks}.",
                    [first.name, second.name],
                    evidence,
                    story=(
                        f"Threads {first.name} and {second.name} appear deadlocked on two locks "
                        "taken in opposite order"
                    ),
                )
