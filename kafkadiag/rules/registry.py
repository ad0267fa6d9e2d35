"""The rule catalogue, in families by the code's first digit, each loaded when first asked for.

A family lists its modules and rule classes explicitly, in code order; retired codes are never
reused. Analysing dumps loads only the dump-scope families, so the cluster rules' imports (lag,
maxlag) stay out of `dump analyze`, and `--help` loads none (as sqlfluff's rule bundles load).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from kafkadiag.rules.base import SCOPE_CLUSTER, SCOPE_DUMP, Rule
from kafkadiag.rules.kd001_rule_crashed import RuleCrashed

# RULES (the whole catalogue) is read through __getattr__ below.
__all__ = [
    "FAMILIES",
    "RETIRED_CODES",
    "Family",
    "RuleCrashed",
    "all_rules",
    "codes_and_names",
    "rule_by_code",
    "rules_of",
]


@dataclass(frozen=True)
class Family:
    prefix: str  # "KD1": every code of the family starts so
    title: str
    scope: str  # the scope of every rule in it (a test checks)
    rules: tuple[tuple[str, str], ...]  # (module in kafkadiag.rules, rule class), in code order


# The catalogue holds rules of both scopes, each over its own context (AnalysisContext for the dump
# rules, DiagnosisContext for the cluster rules): Rule[Any] is "a rule of some context".
FAMILIES: tuple[Family, ...] = (
    Family(
        "KD0",
        "the engine's own",
        SCOPE_DUMP,
        (("kd001_rule_crashed", "RuleCrashed"),),
    ),
    Family(
        "KD1",
        "deadlocks, lock cycles and blocking chains",
        SCOPE_DUMP,
        (
            ("kd101_jvm_reported_deadlock", "JvmReportedDeadlock"),
            ("kd102_lock_cycle", "LockCycle"),
            ("kd103_hidden_wait_deadlock", "HiddenWaitDeadlock"),
            ("kd104_bounded_queue_cycle", "BoundedQueueCycle"),
            ("kd105_blocking_chain", "BlockingChain"),
            ("kd106_contended_lock", "ContendedLock"),
            ("kd107_put_while_holding_lock", "PutWhileHoldingLock"),
            ("kd108_channel_queue_ring", "ChannelQueueRing"),
            ("kd109_shutdown_waits_on_running_thread", "ShutdownWaitsOnRunningThread"),
            ("kd110_event_loop_thread_blocked", "EventLoopThreadBlocked"),
            ("kd111_ring_buffer_full", "RingBufferFull"),
        ),
    ),
    Family(
        "KD2",
        "the old (ZooKeeper) consumer",
        SCOPE_DUMP,
        (
            ("kd201_fetcher_blocked_on_full_queue", "FetcherBlockedOnFullQueue"),
            ("kd202_streams_starving", "StreamsStarving"),
            ("kd203_stream_not_draining", "StreamNotDraining"),
            ("kd204_partition_map_lock_collateral", "PartitionMapLockCollateral"),
        ),
    ),
    Family(
        "KD3",
        "the Java consumer, producer and Kafka Streams",
        SCOPE_DUMP,
        (
            ("kd301_poll_thread_waiting_on_workers", "PollThreadWaitingOnWorkers"),
            ("kd302_poll_thread_blocked_on_full_handoff", "PollThreadBlockedOnFullHandoff"),
            ("kd303_heartbeat_blocked", "HeartbeatBlocked"),
            ("kd304_coordinator_discovery_spinning", "CoordinatorDiscoverySpinning"),
            ("kd305_single_busy_worker", "SingleBusyWorker"),
            ("kd306_consumer_shared_between_threads", "ConsumerSharedBetweenThreads"),
            ("kd307_poll_thread_in_rebalance", "PollThreadInRebalance"),
            ("kd308_producer_call_blocked", "ProducerCallBlocked"),
            ("kd309_consumer_call_blocked", "ConsumerCallBlocked"),
            ("kd310_poll_thread_held_in_application", "PollThreadHeldInApplication"),
        ),
    ),
    Family(
        "KD4",
        "Python consumers",
        SCOPE_DUMP,
        (
            ("kd401_python_poll_blocked_on_full_queue", "PythonPollBlockedOnFullQueue"),
            ("kd402_python_poll_waiting_on_futures", "PythonPollWaitingOnFutures"),
            ("kd403_python_heartbeat_blocked", "PythonHeartbeatBlocked"),
            ("kd404_python_lock_order_inversion", "PythonLockOrderInversion"),
            ("kd405_python_lock_reentry", "PythonLockReentry"),
            ("kd406_python_event_loop_blocked", "PythonEventLoopBlocked"),
        ),
    ),
    Family(
        "KD5",
        "threads over a series of dumps and their CPU",
        SCOPE_DUMP,
        (
            ("kd501_thread_not_moving", "ThreadNotMoving"),
            ("kd502_busy_threads", "BusyThreads"),
            ("kd503_hot_threads", "HotThreads"),
        ),
    ),
    Family(
        "KD6",
        "committed offsets and ownership (lag)",
        SCOPE_CLUSTER,
        (
            ("kd601_offset_below_log_start", "OffsetBelowLogStart"),
            ("kd602_offset_above_high_watermark", "OffsetAboveHighWatermark"),
            ("kd603_unreadable_offset", "UnreadableOffset"),
            ("kd604_watermark_unknown", "WatermarkUnknown"),
            ("kd605_malformed_registration", "MalformedRegistration"),
            ("kd606_offsets_without_consumer", "OffsetsWithoutConsumer"),
            ("kd607_unregistered_owner", "UnregisteredOwner"),
            ("kd608_no_owner", "NoOwner"),
            ("kd609_idle_threads", "IdleThreads"),
            ("kd610_subscription_mismatch", "SubscriptionMismatch"),
            ("kd611_owned_without_offset", "OwnedWithoutOffset"),
            ("kd612_lag_without_active_member", "LagWithoutActiveMember"),
        ),
    ),
    Family(
        "KD7",
        "the consumer's fetcher metrics against its lag (maxlag)",
        SCOPE_CLUSTER,
        (
            ("kd701_streams_not_draining", "StreamsNotDraining"),
            ("kd702_fetch_bound", "FetchBound"),
            ("kd703_consumer_behind", "ConsumerBehind"),
            ("kd704_fetcher_stale", "FetcherStale"),
            ("kd705_fetcher_absent", "FetcherAbsent"),
        ),
    ),
    Family(
        "KD8",
        "the stall explained from dumps and the cluster together",
        SCOPE_CLUSTER,
        (
            ("kd801_old_consumer_stall_explained", "OldConsumerStallExplained"),
            ("kd802_python_consumer_stall_explained", "PythonConsumerStallExplained"),
            ("kd803_new_consumer_stall_explained", "NewConsumerStallExplained"),
        ),
    ),
)

# Codes of rules that were removed: never to be given to a new rule (a CI filter may name them).
RETIRED_CODES: frozenset[str] = frozenset()


@cache
def family_rules(family: Family) -> tuple[type[Rule[Any]], ...]:
    """The family's rule classes, imported on first use."""
    loaded = []
    for module, class_name in family.rules:
        rule: type[Rule[Any]] = getattr(importlib.import_module(f"kafkadiag.rules.{module}"), class_name)
        loaded.append(rule)
    return tuple(loaded)


def rules_of(scope: str) -> tuple[type[Rule[Any]], ...]:
    """Every rule of `scope`, in code order; only the families of that scope are imported."""
    return tuple(rule for family in FAMILIES if family.scope == scope for rule in family_rules(family))


def all_rules() -> tuple[type[Rule[Any]], ...]:
    """The whole catalogue, in code order (the docs, `kafkadiag rules`, the registry's tests)."""
    return tuple(rule for family in FAMILIES for rule in family_rules(family))


def __getattr__(name: str) -> tuple[type[Rule[Any]], ...]:
    # RULES is the whole catalogue, built when first read: importing the registry loads no rule.
    if name == "RULES":
        return all_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def codes_and_names() -> tuple[tuple[str, str], ...]:
    """Every rule's (code, name), read from its module's name (kd101_jvm_reported_deadlock is KD101,
    jvm-reported-deadlock) without importing it: enough to check a --select or --ignore value.
    A test holds each module's name to its class's code and name."""
    table = []
    for family in FAMILIES:
        for module, _ in family.rules:
            code, _, name = module.partition("_")
            table.append((code.upper(), name.replace("_", "-")))
    return tuple(table)


def rule_by_code(code_or_name: str) -> type[Rule[Any]] | None:
    wanted = code_or_name.strip()
    for rule in all_rules():
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    return None
