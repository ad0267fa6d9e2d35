"""The KD6xx rules: what the lag engine finds in one group's offsets and registrations."""

from __future__ import annotations

from kafkadiag.rules.base import Finding
from kafkadiag.rules.cluster import LagFindingRule
from kafkadiag.rules.groupfacts import GroupFacts
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

LAG_RULES: tuple[type[LagFindingRule], ...] = (
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
)


def group_findings(facts: GroupFacts) -> tuple[Finding, ...]:
    """Every KD6xx rule over one group, in code order."""
    return tuple(finding for rule in LAG_RULES for finding in rule().group_check(facts))
