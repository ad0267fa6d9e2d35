"""KD404: two Python threads each blocked on a lock the other's frame also holds a reference to."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Frame, Thread
from kafkadiag.rules import eventloop, interrupts, python
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


def _has_locals(thread: Thread) -> bool:
    return any(frame.locals for frame in thread.frames)


def acquiring_in_application(thread: Thread) -> int | None:
    """Index of the application frame taking the lock the thread waits for, when --native frames
    show the lock acquire itself (without them a sleep at that line looks the same)."""
    taker = interrupts.lock_taking_index(thread)
    if taker is None or python.is_library_frame(thread.frames[taker]):
        return None
    acquiring = any(
        eventloop.is_native(frame) and frame.function in interrupts.LOCK_ACQUIRE_NATIVE
        for frame in thread.frames[:taker]
    )
    return taker if acquiring else None


def _same_code(frame: Frame, other: Frame) -> bool:
    return frame.function == other.function and frame.file == other.file


class PythonLockOrderInversion(Rule[AnalysisContext]):
    code = "KD404"
    name = "python-lock-order-inversion"
    title = "Python threads blocked on each other's locks (lock-order inversion)"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    requires_any = frozenset({Requirement.PYSPY_LOCALS, Requirement.PYSPY_NATIVE})
    explanation = """
Two threads are stopped in application code with the same two locks among their locals, in
swapped roles (thread A's first lock is thread B's second): the signature of A holding one lock
and waiting for the other while B does the opposite. py-spy shows no lock owners, so this is read
from the stacks and --locals; the quoted frames show where each thread stopped.
Without --locals the locks have no identity in the dump. With --native the rule then reports, as
a warning, two or more threads stopped in a lock acquire at the same line of the same function
while no other thread is anywhere in that function: the shape of one function taking two locks in
an order that depends on its arguments (transfer(a, b) against transfer(b, a)). The same picture
arises when every one of them waits for a lock that a thread elsewhere holds (or that was never
released), so the finding says so; capture with --locals to see the locks themselves. Without
--native a thread sleeping at that line looks the same, so nothing is reported.
"""
    remedy = """
Take the locks in one fixed order everywhere (e.g. by an id), or use one lock for both resources;
acquire with a timeout and back off to break a deadlock at run time.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        yield from self._by_locals(context)
        yield from self._by_acquire_line(context)

    def _by_locals(self, context: AnalysisContext) -> Iterator[Finding]:
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

    def _by_acquire_line(self, context: AnalysisContext) -> Iterator[Finding]:
        """Without --locals: threads stopped acquiring at one line of a function nobody else is in."""
        dump = context.dump
        if any(_has_locals(thread) for thread in dump.threads):
            return  # the locals show the locks: the rule above has decided
        at_line: dict[tuple[str, str | None, int | None], list[tuple[Thread, int]]] = {}
        for thread in dump.threads:
            taker = acquiring_in_application(thread)
            if taker is not None:
                frame = thread.frames[taker]
                at_line.setdefault((frame.function, frame.file, frame.line), []).append((thread, taker))
        for waiting in at_line.values():
            if len(waiting) < 2:
                continue
            frame = waiting[0][0].frames[waiting[0][1]]
            names = [thread.name for thread, _ in waiting]
            waiting_ids = {id(thread) for thread, _ in waiting}  # threads may share a name
            # A thread anywhere else in the function may be the holder, inside its critical section.
            elsewhere = [
                thread
                for thread in dump.threads
                if id(thread) not in waiting_ids and any(_same_code(frame, other) for other in thread.frames)
            ]
            if elsewhere:
                continue
            evidence = []
            for thread, taker in waiting:
                evidence += [context.header(thread), context.frame(thread, taker)]
            yield self.finding(
                f"{', '.join(names[:-1])} and {names[-1]} are {'both' if len(names) == 2 else 'all'} "
                f"stopped acquiring a lock at "
                f"{frame.text.strip()} (--native shows the lock acquire), and no other thread is in "
                f"{frame.function}: each may hold the lock another waits for, taken in an order that "
                f"depends on the call's arguments. py-spy shows no lock identities without --locals, so "
                f"this cannot be told apart from all of them waiting for a lock held elsewhere or never "
                f"released: capture with --locals to confirm.",
                names,
                evidence,
                severity=Severity.WARNING,
                story=(
                    f"Threads {', '.join(names)} may be deadlocked on locks taken in opposite order in "
                    f"{frame.function}"
                ),
                details={"function": frame.function, "line": frame.line, "confidence": "same acquire line"},
            )
