"""KD305: one worker of a pool carries all the work while the others idle."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from kafkadiag.model import Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

MIN_POOL = 3
# Only from the start of a run of digits: `\d+$` alone was tried from every digit of a long run
# that does not end the name (a 256 KB name of digits and a letter took minutes).
TRAILING_NUMBER = re.compile(r"(?<!\d)\d+$")


def pools(dump: ThreadDump) -> dict[str, list[Thread]]:
    """Threads grouped by name without its trailing number ("clicks-worker-3" -> "clicks-worker-")."""
    grouped: dict[str, list[Thread]] = {}
    search = TRAILING_NUMBER.search
    for thread in dump.threads:
        number = search(thread.name)
        if number is not None:
            grouped.setdefault(thread.name[: number.start()] + thread.name[number.end() :], []).append(thread)
    return {prefix: members for prefix, members in grouped.items() if len(members) >= MIN_POOL}


def busy(thread: Thread) -> bool:
    """Running application code. RUNNABLE in a blocking socket read or write is waiting for a peer,
    not carrying work: real kafka-clients 4.1.1, a pool worker whose payment the bank never answers
    while the other workers wait for tasks (fixtures/captured/real-new-consumer-waits-workers-4.1.1)
    is KD301's culprit, and was named here as the only busy worker."""
    return (
        thread.status is ThreadStatus.RUNNABLE
        and bool(thread.frames)
        and thread.frames[0].function not in stacks.BLOCKING_IO_FRAMES
        and stacks.first_application_frame(thread) is not None
        and not stacks.is_idle_wait(thread)
    )


class Pools(NamedTuple):
    members: dict[str, list[Thread]]  # `pools`
    lone_busy: dict[str, Thread]  # pool prefix -> its only busy worker, the others waiting for work


def lone_busy_workers(dump: ThreadDump) -> Pools:
    """The dump's pools, and for those where all workers but one wait for work, that one if busy."""
    members_by_prefix = pools(dump)
    # Waiting for work is a question of the stack: asked once per distinct stack.
    waiting = {
        id(thread)
        for thread in stackindex.threads_with(dump, *stacks.IDLE_WAIT_FRAMES, suffix=True)
        if thread.status is not ThreadStatus.BLOCKED  # what stacks.is_idle_wait adds to the frames
    }
    found = {}
    for prefix, members in members_by_prefix.items():
        others = [thread for thread in members if id(thread) not in waiting]
        if len(others) == 1 and busy(others[0]):
            found[prefix] = others[0]
    return Pools(members_by_prefix, found)


class SingleBusyWorker(Rule[AnalysisContext]):
    code = "KD305"
    name = "single-busy-worker"
    title = "One worker carries the work while the rest of the pool idles"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
A pool of workers where exactly one runs application code and every other one waits for tasks.
A worker RUNNABLE in a blocking socket read or write is waiting for a peer, not carrying the work,
and is not counted (a poll thread waiting on it is KD301's).
With per-partition ordering (records of one partition always go to the same worker), a backlog on
one partition - or all partitions hashed to one worker - collapses the pool to a single thread:
lag grows on that partition while the other workers have nothing to do. One dump can catch a
pool at a quiet moment, so a single dump only informs; the same worker busy and the others idle
in several dumps is a warning.
"""
    remedy = """
Check the lag per partition (kafkadiag lag): one partition far behind means a hot key or a slow
record. Spread work by key within the partition where ordering allows, add partitions, or process
the hot partition with more parallelism (e.g. a key-ordered parallel consumer).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        found = context.cached("lone-busy-workers", dump, lone_busy_workers)
        for prefix, worker in found.lone_busy.items():
            members = found.members[prefix]
            same_in = [
                other
                for other in context.series
                if (
                    lone := context.cached("lone-busy-workers", other, lone_busy_workers).lone_busy.get(
                        prefix
                    )
                )
                is not None
                and lone.name == worker.name
            ]
            persistent = len(context.series) > 1 and len(same_in) == len(context.series)
            evidence = [context.header(worker)]
            application = stacks.first_application_frame(worker)
            if application is not None:
                evidence.append(context.frame(worker, application))
            idle = [thread for thread in members if thread is not worker]
            evidence += [context.header(thread) for thread in idle[:3]]
            seen = f" in all {len(context.series)} dumps" if persistent else " in this dump"
            yield self.finding(
                f"{worker.name} is the only busy worker of the {len(members)} {prefix}* threads{seen} "
                f"({stacks.doing(worker)}); {', '.join(thread.name for thread in idle)} wait for work.",
                # The idle workers are quoted, not named as involved: waiting for work is what an
                # idle pool worker should do, and no finding names one as stuck.
                [worker.name],
                evidence,
                severity=Severity.WARNING if persistent else Severity.INFO,
                story=f"Worker {worker.name} carries all the work of its pool while the rest idle",
                details={"idle_workers": [thread.name for thread in idle]},
            )
