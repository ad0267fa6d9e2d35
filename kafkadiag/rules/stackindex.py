"""Which threads of a dump run a given function, answered from the dump's distinct stacks.

A large dump is mostly repetition: 150,000 threads of a real service hold a few hundred distinct
stacks, because the workers of a pool park in the same frames. Rules that look for the few
threads in a put, a poll or a join ask here: each distinct stack is searched once, and the answer
is kept for every rule that asks the same question of the same dump.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable
from typing import TypeVar

from kafkadiag.model import Frame, Thread, ThreadDump
from kafkadiag.rules import stacks

T = TypeVar("T")
S = TypeVar("S")


def in_dump_order(runs: list[list[S]]) -> list[S]:
    """Runs of positions (or of tuples led by one), each in dump order, merged into one: the sort
    merges the runs it finds in C, where heapq.merge would step through them in Python."""
    return sorted(itertools.chain.from_iterable(runs))  # type: ignore[type-var]


class StackIndex:
    """The distinct stacks of one dump, each with the positions of the threads that share it."""

    def __init__(self, dump: ThreadDump) -> None:
        sharing: dict[Hashable, tuple[tuple[Frame, ...], list[int]]] = {}
        for position, thread in enumerate(dump.threads):
            key: Hashable = thread.frames
            try:
                entry = sharing.get(key)
            except TypeError:  # a frame field a parser left unhashable: the stack stands alone
                key, entry = ("unshared", position), None
            if entry is None:
                sharing[key] = (thread.frames, [position])
            else:
                entry[1].append(position)
        self._shared = list(sharing.values())
        # Functions joined by newlines, as stacks.has_frame searches them: one C-level search. A
        # thread without frames runs nothing: no question about functions finds it.
        self._stacks = [
            (stacks.joined_functions(frames), positions) for frames, positions in self._shared if frames
        ]
        self._answers: dict[Hashable, list[int]] = {}
        self._stack_answers: dict[Hashable, list[tuple[int, object]]] = {}

    def shared_stacks(self) -> list[tuple[tuple[Frame, ...], list[int]]]:
        """Each distinct stack with the positions, in dump order, of the threads that share it.

        The lists returned here and by the questions below are the index's own: read, never change.
        """
        return self._shared

    def answers(
        self, question: Hashable, answer: Callable[[tuple[Frame, ...]], T | None]
    ) -> list[tuple[int, T]]:
        kept = self._stack_answers.get(question)
        if kept is None:
            found: list[list[tuple[int, object]]] = []
            for frames, positions in self._shared:
                value = answer(frames)
                if value is not None:
                    found.append([(position, value) for position in positions])
            # Positions are distinct, so sorting never compares two answers.
            kept = self._stack_answers[question] = in_dump_order(found)
        return kept  # type: ignore[return-value]

    def positions_where(self, question: Hashable, matches: Callable[[str], bool]) -> list[int]:
        """Positions, in dump order, of the threads whose joined functions `matches`; the answer
        is kept under `question`."""
        answer = self._answers.get(question)
        if answer is None:
            found = [positions for text, positions in self._stacks if matches(text)]
            answer = found[0] if len(found) == 1 else in_dump_order(found)
            self._answers[question] = answer
        return answer


# Dump id -> (the dump, its index); the dump is kept for an identity check. Emptied by the engine
# after each analysis, with the stacks' own memo.
_INDEXES: dict[int, tuple[ThreadDump, StackIndex]] = {}


def stack_index(dump: ThreadDump) -> StackIndex:
    entry = _INDEXES.get(id(dump))
    if entry is None or entry[0] is not dump:
        entry = _INDEXES[id(dump)] = (dump, StackIndex(dump))
    return entry[1]


def forget_indexes() -> None:
    _INDEXES.clear()


def positions_with(dump: ThreadDump, *functions: str, suffix: bool = False) -> list[int]:
    """Positions of the threads for which stacks.has_frame(thread, *functions, suffix) holds."""
    needles = stacks.needles(functions, suffix)

    def matches(text: str) -> bool:
        return any(map(text.__contains__, needles))

    return stack_index(dump).positions_where(("frame", needles), matches)


def threads_with(dump: ThreadDump, *functions: str, suffix: bool = False) -> list[Thread]:
    """The threads, in dump order, for which stacks.has_frame(thread, *functions, suffix) holds."""
    threads = dump.threads
    return [threads[position] for position in positions_with(dump, *functions, suffix=suffix)]


def positions_in_class(dump: ThreadDump, class_name: str) -> list[int]:
    """Positions of the threads for which stacks.runs_in_class(thread, class_name) holds."""
    pattern: re.Pattern[str] = stacks.class_pattern(class_name)
    return stack_index(dump).positions_where(
        ("class", class_name), lambda text: pattern.search(text) is not None
    )


def stack_answers(
    dump: ThreadDump, question: Hashable, answer: Callable[[tuple[Frame, ...]], T | None]
) -> list[tuple[int, T]]:
    """(position, answer) in dump order for the threads whose stack has an answer (not None):
    `answer` reads each distinct stack once, and the result is kept under `question`."""
    return stack_index(dump).answers(question, answer)
