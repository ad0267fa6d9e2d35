"""The rule catalogue: an explicit tuple, in code order. Retired codes are never reused."""

from __future__ import annotations

from kafkadiag.rules.base import Rule
from kafkadiag.rules.kd001_rule_crashed import RuleCrashed
from kafkadiag.rules.kd101_jvm_reported_deadlock import JvmReportedDeadlock
from kafkadiag.rules.kd102_lock_cycle import LockCycle
from kafkadiag.rules.kd103_hidden_wait_deadlock import HiddenWaitDeadlock
from kafkadiag.rules.kd104_bounded_queue_cycle import BoundedQueueCycle
from kafkadiag.rules.kd105_blocking_chain import BlockingChain
from kafkadiag.rules.kd106_contended_lock import ContendedLock
from kafkadiag.rules.kd107_put_while_holding_lock import PutWhileHoldingLock
from kafkadiag.rules.kd108_channel_queue_ring import ChannelQueueRing
from kafkadiag.rules.kd109_shutdown_waits_on_running_thread import ShutdownWaitsOnRunningThread
from kafkadiag.rules.kd201_fetcher_blocked_on_full_queue import FetcherBlockedOnFullQueue
from kafkadiag.rules.kd202_streams_starving import StreamsStarving
from kafkadiag.rules.kd203_stream_not_draining import StreamNotDraining
from kafkadiag.rules.kd204_partition_map_lock_collateral import PartitionMapLockCollateral
from kafkadiag.rules.kd301_poll_thread_waiting_on_workers import PollThreadWaitingOnWorkers
from kafkadiag.rules.kd302_poll_thread_blocked_on_full_handoff import PollThreadBlockedOnFullHandoff
from kafkadiag.rules.kd303_heartbeat_blocked import HeartbeatBlocked
from kafkadiag.rules.kd304_coordinator_discovery_spinning import CoordinatorDiscoverySpinning
from kafkadiag.rules.kd305_single_busy_worker import SingleBusyWorker
from kafkadiag.rules.kd306_consumer_shared_between_threads import ConsumerSharedBetweenThreads
from kafkadiag.rules.kd307_poll_thread_in_rebalance import PollThreadInRebalance
from kafkadiag.rules.kd308_producer_call_blocked import ProducerCallBlocked
from kafkadiag.rules.kd309_consumer_call_blocked import ConsumerCallBlocked
from kafkadiag.rules.kd310_poll_thread_held_in_application import PollThreadHeldInApplication
from kafkadiag.rules.kd401_python_poll_blocked_on_full_queue import PythonPollBlockedOnFullQueue
from kafkadiag.rules.kd402_python_poll_waiting_on_futures import PythonPollWaitingOnFutures
from kafkadiag.rules.kd403_python_heartbeat_blocked import PythonHeartbeatBlocked
from kafkadiag.rules.kd404_python_lock_order_inversion import PythonLockOrderInversion
from kafkadiag.rules.kd405_python_lock_reentry import PythonLockReentry
from kafkadiag.rules.kd406_python_event_loop_blocked import PythonEventLoopBlocked
from kafkadiag.rules.kd501_thread_not_moving import ThreadNotMoving
from kafkadiag.rules.kd502_busy_threads import BusyThreads
from kafkadiag.rules.kd503_hot_threads import HotThreads
from kafkadiag.rules.kd601_offset_below_log_start import OffsetBelowLogStart
from kafkadiag.rules.kd602_offset_above_high_watermark import OffsetAboveHighWatermark
from kafkadiag.rules.kd603_unreadable_offset import UnreadableOffset
from kafkadiag.rules.kd604_watermark_unknown import WatermarkUnknown
from kafkadiag.rules.kd605_malformed_registration import MalformedRegistration
from kafkadiag.rules.kd606_offsets_without_consumer import OffsetsWithoutConsumer
from kafkadiag.rules.kd607_unregistered_owner import UnregisteredOwner
from kafkadiag.rules.kd608_no_owner import NoOwner
from kafkadiag.rules.kd609_idle_threads import IdleThreads
from kafkadiag.rules.kd610_subscription_mismatch import SubscriptionMismatch
from kafkadiag.rules.kd611_owned_without_offset import OwnedWithoutOffset
from kafkadiag.rules.kd701_streams_not_draining import StreamsNotDraining
from kafkadiag.rules.kd702_fetch_bound import FetchBound
from kafkadiag.rules.kd703_consumer_behind import ConsumerBehind
from kafkadiag.rules.kd704_fetcher_stale import FetcherStale
from kafkadiag.rules.kd705_fetcher_absent import FetcherAbsent
from kafkadiag.rules.kd801_old_consumer_stall_explained import OldConsumerStallExplained
from kafkadiag.rules.kd802_python_consumer_stall_explained import PythonConsumerStallExplained
from kafkadiag.rules.kd803_new_consumer_stall_explained import NewConsumerStallExplained

RULES: tuple[type[Rule], ...] = (
    RuleCrashed,
    JvmReportedDeadlock,
    LockCycle,
    HiddenWaitDeadlock,
    BoundedQueueCycle,
    BlockingChain,
    ContendedLock,
    PutWhileHoldingLock,
    ChannelQueueRing,
    ShutdownWaitsOnRunningThread,
    FetcherBlockedOnFullQueue,
    StreamsStarving,
    StreamNotDraining,
    PartitionMapLockCollateral,
    PollThreadWaitingOnWorkers,
    PollThreadBlockedOnFullHandoff,
    HeartbeatBlocked,
    CoordinatorDiscoverySpinning,
    SingleBusyWorker,
    ConsumerSharedBetweenThreads,
    PollThreadInRebalance,
    ProducerCallBlocked,
    ConsumerCallBlocked,
    PollThreadHeldInApplication,
    PythonPollBlockedOnFullQueue,
    PythonPollWaitingOnFutures,
    PythonHeartbeatBlocked,
    PythonLockOrderInversion,
    PythonLockReentry,
    PythonEventLoopBlocked,
    ThreadNotMoving,
    BusyThreads,
    HotThreads,
    OffsetBelowLogStart,
    OffsetAboveHighWatermark,
    UnreadableOffset,
    WatermarkUnknown,
    MalformedRegistration,
    OffsetsWithoutConsumer,
    UnregisteredOwner,
    NoOwner,
    IdleThreads,
    SubscriptionMismatch,
    OwnedWithoutOffset,
    StreamsNotDraining,
    FetchBound,
    ConsumerBehind,
    FetcherStale,
    FetcherAbsent,
    OldConsumerStallExplained,
    PythonConsumerStallExplained,
    NewConsumerStallExplained,
)

# Codes of rules that were removed: never to be given to a new rule (a CI filter may name them).
RETIRED_CODES: frozenset[str] = frozenset()


def rule_by_code(code_or_name: str) -> type[Rule] | None:
    wanted = code_or_name.strip()
    for rule in RULES:
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    return None
