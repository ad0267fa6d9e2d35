"""KD104: threads each blocked putting into a full queue that only another of them drains."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

QUEUE_OBJECT = re.compile(r"<(?:\w+\.)?(?:Queue|LifoQueue|PriorityQueue) (?:object )?at (0x[0-9a-fA-F]+)>")


def queues_referenced(thread: Thread, skip_frame: int) -> set[int]:
    found = set()
    for index, frame in enumerate(thread.frames):
        if index == skip_frame:
            continue
        for variable in frame.locals:
            match = QUEUE_OBJECT.search(variable.value)
            if match:
                found.add(int(match.group(1), 16))
    return found


class BoundedQueueCycle(Rule[AnalysisContext]):
    code = "KD104"
    name = "bounded-queue-cycle"
    title = "Threads blocked putting into full queues that only they drain"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON, Requirement.PYSPY_LOCALS})
    explanation = """
Thread A is blocked putting into a full bounded queue that only thread B takes from, while B is
blocked putting into a full queue only A takes from (or a longer ring). Nobody will take again:
a deadlock through queues, which no lock-based detector sees. Linking a queue's producer and
consumer needs the queue objects themselves, which py-spy --locals shows for Python; a Java dump
shows only the queues' condition objects, so the two sides of a Java queue cannot be linked from
the dump alone (KD108 infers such a ring from the channel object the puts go through).
"""
    remedy = """
Break the ring: make one stage's queue unbounded or let it drop/spill, or have a stage put with a
timeout and keep draining its own inbox while it retries.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        # Keyed by the thread's index in the dump: names may repeat.
        blocked: dict[int, tuple[Thread, int, int]] = {}
        for index, thread in enumerate(dump.threads):
            put = python.python_function_index(thread, "Queue.put")
            if put is None or thread.active:
                continue
            target = python.self_address(thread.frames[put])
            if target is not None:
                blocked[index] = (thread, put, target)
        if len(blocked) < 2:
            return
        # Who else could take from each full queue: every thread whose frames reference it.
        consumers = {
            key: {
                other
                for other, (thread, put, _) in blocked.items()
                if other != key and target in queues_referenced(thread, put)
            }
            for key, (_, _, target) in blocked.items()
        }
        free_consumers = {
            key
            for key, (_, _, target) in blocked.items()
            if any(
                target in queues_referenced(t, -1) and index not in blocked
                for index, t in enumerate(dump.threads)
            )
        }
        seen: set[frozenset[int]] = set()
        for start in blocked:
            path = [start]
            while True:
                nexts = sorted(consumers[path[-1]])
                if not nexts or path[-1] in free_consumers:
                    break
                following = nexts[0]
                if following in path:
                    ring = path[path.index(following) :]
                    key = frozenset(ring)
                    if key not in seen:
                        seen.add(key)
                        yield self._finding(context, [blocked[key] for key in ring])
                    break
                path.append(following)

    def _finding(self, context: AnalysisContext, ring: list[tuple[Thread, int, int]]) -> Finding:
        evidence = []
        steps = []
        for position, (thread, put, target) in enumerate(ring):
            drainer = ring[(position + 1) % len(ring)][0]
            evidence += [context.header(thread), context.frame(thread, put)]
            steps.append(
                f"{context.label(thread)} waits to put into queue 0x{target:x}, "
                f"drained only by {context.label(drainer)}"
            )
        names = context.labels(thread for thread, _, _ in ring)
        return self.finding(
            "; ".join(steps) + ".",
            names,
            evidence,
            story=f"Threads {', '.join(names)} are deadlocked through full queues they feed to each other",
        )
