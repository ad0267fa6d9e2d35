"""The rule catalogue: an explicit tuple, in code order. Retired codes are never reused."""

from __future__ import annotations

from kafkadiag.rules.base import Rule
from kafkadiag.rules.kd001_rule_crashed import RuleCrashed
from kafkadiag.rules.kd101_jvm_reported_deadlock import JvmReportedDeadlock
from kafkadiag.rules.kd102_lock_cycle import LockCycle
from kafkadiag.rules.kd103_hidden_wait_deadlock import HiddenWaitDeadlock
from kafkadiag.rules.kd105_blocking_chain import BlockingChain
from kafkadiag.rules.kd106_contended_lock import ContendedLock
from kafkadiag.rules.kd201_fetcher_blocked_on_full_queue import FetcherBlockedOnFullQueue
from kafkadiag.rules.kd202_streams_starving import StreamsStarving
from kafkadiag.rules.kd203_stream_not_draining import StreamNotDraining
from kafkadiag.rules.kd204_partition_map_lock_collateral import PartitionMapLockCollateral
from kafkadiag.rules.kd401_python_poll_blocked_on_full_queue import PythonPollBlockedOnFullQueue
from kafkadiag.rules.kd501_thread_not_moving import ThreadNotMoving
from kafkadiag.rules.kd502_busy_threads import BusyThreads

RULES: tuple[type[Rule], ...] = (
    RuleCrashed,
    JvmReportedDeadlock,
    LockCycle,
    HiddenWaitDeadlock,
    BlockingChain,
    ContendedLock,
    FetcherBlockedOnFullQueue,
    StreamsStarving,
    StreamNotDraining,
    PartitionMapLockCollateral,
    PythonPollBlockedOnFullQueue,
    ThreadNotMoving,
    BusyThreads,
)

# Codes of rules that were removed: never to be given to a new rule (a CI filter may name them).
RETIRED_CODES: frozenset[str] = frozenset()


def rule_by_code(code_or_name: str) -> type[Rule] | None:
    wanted = code_or_name.strip()
    for rule in RULES:
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    return None
