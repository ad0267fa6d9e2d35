"""Who holds which lock and who waits for it, within one dump; the wait-for graph on top.

A thread *waits for* another when it is blocked entering (or re-entering) a monitor, or parked
on an ownable synchronizer, that the other thread holds. Object.wait() on a monitor is not such
a wait: the waiter released the monitor and needs a notify, not the lock. Threads parked on a
condition (AbstractQueuedSynchronizer$ConditionObject) have no holder to blame either: a
condition has no owner, which is why a blocked queue put/take needs more than the dump to link
its two sides.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kafkadiag.model import LockEvent, LockEventKind, Thread, ThreadDump

_BLOCKING_KINDS = frozenset({LockEventKind.WAITING_TO_LOCK, LockEventKind.WAITING_TO_RELOCK})
_PARKING = LockEventKind.PARKING
_WAITING_ON = LockEventKind.WAITING_ON


@dataclass
class LockNode:
    """One monitor or ownable synchronizer and every thread related to it."""

    lock_id: int
    lock_class: str | None
    holders: list[int] = field(default_factory=list)  # thread indexes
    blocked: list[int] = field(default_factory=list)  # waiting to lock / re-lock
    parked: list[int] = field(default_factory=list)  # parking to wait for
    waiting: list[int] = field(default_factory=list)  # Object.wait(): waiting for a notify

    _holders: frozenset[int] | None = None

    def holder_set(self) -> frozenset[int]:
        """`holders` as a set, made once the graph is built (membership tests on big read locks)."""
        if self._holders is None or len(self._holders) != len(self.holders):
            self._holders = frozenset(self.holders)
        return self._holders

    @property
    def waiters(self) -> list[int]:
        """Threads waiting for the lock itself: blocked entering it, then parked on it (a thread in
        Object.wait() waits for a notify, not for the lock)."""
        return self.blocked + self.parked

    @property
    def waiter_count(self) -> int:
        return len(self.blocked) + len(self.parked)


class LockGraph:
    """Built once per dump; threads are addressed by their index in `dump.threads`."""

    def __init__(self, dump: ThreadDump) -> None:
        self.dump = dump
        self.threads = dump.threads
        self.locks: dict[int, LockNode] = {}
        self._wait_event: dict[int, LockEvent] = {}
        self._cycles: list[list[int]] | None = None
        for index, thread in enumerate(self.threads):
            if not thread.lock_events and not thread.held_synchronizers:
                continue  # most threads of a large dump: nothing to hold, nothing to wait for
            for held in thread.held_locks():
                self._node(held.lock_id, held.lock_class).holders.append(index)
            event = thread.waits_for()
            if event is None or event.lock_id is None:
                continue
            self._wait_event[index] = event
            node = self._node(event.lock_id, event.lock_class)
            if event.kind in _BLOCKING_KINDS:
                node.blocked.append(index)
            elif event.kind is _PARKING:
                node.parked.append(index)
            else:
                node.waiting.append(index)

    def _node(self, lock_id: int, lock_class: str | None) -> LockNode:
        node = self.locks.get(lock_id)
        if node is None:
            node = self.locks[lock_id] = LockNode(lock_id, lock_class)
        elif node.lock_class is None:
            node.lock_class = lock_class
        return node

    # -- per thread ---------------------------------------------------------------------------

    def waiting_event(self, index: int) -> LockEvent | None:
        return self._wait_event.get(index)

    def blockers(self, index: int) -> list[int]:
        """Threads holding the lock that thread `index` is blocked or parked on."""
        event = self._wait_event.get(index)
        if event is None or event.kind is _WAITING_ON or event.lock_id is None:
            return []
        node = self.locks[event.lock_id]
        holders = node.holders
        if len(holders) == 1:
            return holders if holders[0] != index else []
        # A read lock may have thousands of holders: copy only when this thread is one of them.
        return [holder for holder in holders if holder != index] if index in node.holder_set() else holders

    def blocked_by(self, index: int) -> list[int]:
        """Threads that thread `index` blocks: waiting for a lock it holds."""
        victims: list[int] = []
        for held in self.threads[index].held_locks():
            node = self.locks.get(held.lock_id)
            if node is not None:
                victims.extend(i for i in node.waiters if i != index)
        return victims

    def waited_for_by_others(self, lock_id: int, holder: int) -> bool:
        """Some thread other than `holder` is blocked or parked on the lock."""
        node = self.locks.get(lock_id)
        if node is None:
            return False
        return any(waiter != holder for waiter in node.waiters)

    def chain(self, index: int) -> list[int]:
        """Follow blockers from `index` until a thread that waits for nobody, or a cycle.

        One chain is as long as it is; to compare the chains of every thread, `chain_lengths`
        measures them all at once (a chain per thread walked again the threads behind it: 50,000
        threads blocked in a row took 279 s).
        """
        path = [index]
        seen = {index}
        current = index
        while True:
            blockers = self.blockers(current)
            if not blockers:
                return path
            current = blockers[0]
            if current in seen:
                path.append(current)
                return path
            seen.add(current)
            path.append(current)

    def chain_lengths(self) -> dict[int, int]:
        """len(self.chain(i)) for every thread `i` that waits for another, when its chain ends at a
        thread that waits for nobody (one that runs into a loop is left out), in one pass.

        Each thread's chain is its first blocker's with itself in front, so every thread is
        walked once: from each thread not yet measured to the first that is (or that waits for
        nobody), then the walk is measured back from its end.
        """
        lengths: dict[int, int] = {}
        looping: set[int] = set()
        for start in self._wait_event:
            if start in lengths or start in looping or not self.blockers(start):
                continue
            walk: list[int] = []
            on_walk: set[int] = set()
            current: int | None = start
            while current is not None and current not in lengths and current not in looping:
                if current in on_walk:
                    break  # the walk closed a loop: every thread on it runs into one
                walk.append(current)
                on_walk.add(current)
                blockers = self.blockers(current)
                current = blockers[0] if blockers else None
            if current is not None and (current in on_walk or current in looping):
                looping.update(walk)
                continue
            length = lengths[current] if current is not None else 0
            for member in reversed(walk):
                length += 1
                lengths[member] = length
        return {index: length for index, length in lengths.items() if length > 1}

    # -- whole dump -----------------------------------------------------------------------------

    def roots(self) -> list[int]:
        """The tops of blocking trees.

        A thread that blocks others while waiting for nobody, or a deadlocked thread that blocks
        someone outside its cycle (the cycle itself is reported by `cycles`).
        """
        in_cycle = {member for cycle in self.cycles() for member in cycle}
        roots = []
        for index in range(len(self.threads)):
            victims = self.blocked_by(index)
            if not victims:
                continue
            if not self.blockers(index) or (
                index in in_cycle and any(victim not in in_cycle for victim in victims)
            ):
                roots.append(index)
        return roots

    def tree(self, root: int) -> dict[int, dict]:  # type: ignore[type-arg]
        """The blocking tree under `root`: {thread: {blocked thread: {...}}}.

        Members of wait-for cycles are never children: they are roots or in the cycle report.
        """
        seen = {root} | {member for cycle in self.cycles() for member in cycle}
        # Depth first, as a recursion would grow it, on a stack of its own: a chain of 50,000
        # blocked threads is 50,000 levels deep.
        grown: dict[int, dict] = {}  # type: ignore[type-arg]
        pending = [(iter(self.blocked_by(root)), grown)]
        while pending:
            victims, children = pending[-1]
            for victim in victims:
                if victim not in seen:
                    seen.add(victim)
                    children[victim] = {}
                    pending.append((iter(self.blocked_by(victim)), children[victim]))
                    break
            else:
                pending.pop()
        return {root: grown}

    def cycles(self) -> list[list[int]]:
        """Wait-for cycles (deadlocks) over monitors and ownable synchronizers, each once."""
        if self._cycles is None:
            self._cycles = self._find_cycles()
        return self._cycles

    def _find_cycles(self) -> list[list[int]]:
        """Strongly connected components of the wait-for graph, each as one cycle through it.

        Every edge counts (a lock held by several threads, as read locks are, gives several),
        so a deadlock through any holder is found; a component is reported once, in the order
        of one cycle through it, starting from its earliest thread in the dump.
        """
        thread_count = len(self.threads)
        components = _strongly_connected(self._edges_through_locks())
        cycles = []
        for component in components:
            members = {node for node in component if node < thread_count}
            if len(members) < 2:
                continue  # a lock alone, or a thread that waits for nobody in its component
            start = min(members)
            cycle = [start]
            on_cycle = {start}  # a set beside the list: a cycle of 100,000 threads took 36 s
            current = start
            while True:
                current = next(n for n in self.blockers(current) if n in members)
                if current in on_cycle:
                    break
                cycle.append(current)
                on_cycle.add(current)
            cycles.append(cycle)
        return sorted(cycles)

    def _edges_through_locks(self) -> dict[int, list[int]]:
        """The wait-for graph with each lock as a node between its waiters and its holders.

        Thread `i` is node i, the k-th lock waited for is node len(threads) + k. A waiter points
        to its lock and the lock to its holders, so a lock with thousands of holders (a read lock)
        and thousands of waiters costs their sum in edges, not their product. A thread waiting for
        a lock it holds itself points straight to the other holders, as `blockers` says, so that
        it is never a cycle of its own. Threads reach each other exactly as through `blockers`.
        """
        # Only threads blocked by another thread can be on a cycle; on a large dump that is a
        # small fraction of the waiters (most park on conditions, which have no holder).
        edges: dict[int, list[int]] = {}
        lock_nodes: dict[int, int] = {}
        for index, event in self._wait_event.items():
            if event.kind is _WAITING_ON or event.lock_id is None:
                continue
            node = self.locks[event.lock_id]
            if not node.holders:
                continue
            if index in node.holder_set():
                others = [holder for holder in node.holders if holder != index]
                if others:
                    edges[index] = others
                continue
            lock_node = lock_nodes.get(event.lock_id)
            if lock_node is None:
                lock_node = lock_nodes[event.lock_id] = len(self.threads) + len(lock_nodes)
                edges[lock_node] = node.holders
            edges[index] = [lock_node]
        return edges

    def contended(self, minimum_waiters: int = 2) -> Iterator[LockNode]:
        """Locks with at least `minimum_waiters` blocked or parked threads, most contended first."""
        nodes = [node for node in self.locks.values() if node.waiter_count >= minimum_waiters]
        yield from sorted(nodes, key=lambda node: -node.waiter_count)

    def parked_without_holder(self, lock_classes: tuple[str, ...]) -> list[int]:
        """Threads parked on a lock of `lock_classes` that no thread is seen to hold.

        Without `-l` that is every thread parked on a ReentrantLock: the dump cannot show holders.
        """
        return [
            index
            for node in self.locks.values()
            if not node.holders and (node.lock_class or "").endswith(lock_classes)
            for index in node.parked
        ]

    def without_owner(self, ownable_classes: tuple[str, ...]) -> list[LockNode]:
        """Locks threads are blocked on whose holder is in none of the dump's threads.

        Monitors always name their holder in a whole dump, and ownable synchronizers do with
        `-l` (only classes in `ownable_classes` have holders at all: a latch or a condition has
        none). A lock left without one means the holder is not in the text: an excerpt that
        leaves it out, or a holder that let go while the dump was being written.
        """
        found = []
        for node in self.locks.values():
            if node.holders:
                continue
            ownable = self.dump.has_lock_data and (node.lock_class or "").endswith(ownable_classes)
            if node.blocked or (node.parked and ownable):
                found.append(node)
        return sorted(found, key=lambda node: node.lock_id)

    def thread(self, index: int) -> Thread:
        return self.threads[index]

    def index_of(self, name: str) -> int | None:
        for index, thread in enumerate(self.threads):
            if thread.name == name:
                return index
        return None


def _strongly_connected(edges: dict[int, list[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative (a 100,000-thread dump must not hit the recursion limit)."""
    index_of: dict[int, int] = {}
    lowlink: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    components: list[list[int]] = []
    no_successors: list[int] = []
    for root in edges:
        if root in index_of:
            continue
        work = [(root, iter(edges.get(root, no_successors)))]
        index_of[root] = lowlink[root] = len(index_of)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index_of:
                    index_of[successor] = lowlink[successor] = len(index_of)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges.get(successor, no_successors))))
                    break
                if successor in on_stack and index_of[successor] < lowlink[node]:
                    lowlink[node] = index_of[successor]
            else:
                work.pop()
                if lowlink[node] == index_of[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
                if work:
                    parent = work[-1][0]
                    if lowlink[node] < lowlink[parent]:
                        lowlink[parent] = lowlink[node]
    return components
