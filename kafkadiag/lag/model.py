"""What the lag evaluation returns: per partition, per topic, per group; plain frozen data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from kafkadiag.lag.snapshot import GroupMember

if TYPE_CHECKING:
    from kafkadiag.findings import Finding


class PartitionLag(NamedTuple):
    """One partition of one group. A NamedTuple, not a frozen dataclass: a report may hold
    10,000s of them and a frozen dataclass's __init__ costs several times a tuple's."""

    group: str
    topic: str
    partition: int
    committed_offset: int | None
    high_watermark: int | None
    log_start_offset: int | None
    lag: int | None  # high_watermark - committed_offset, exactly as kafka-consumer-groups.sh
    owner: str | None = None
    leader: int | None = None
    last_progress_ms: int | None = None  # when the offset last moved, if known
    # Seconds since the offset last moved; with `since_progress_at_least` it is a lower bound
    # (the offset did not move during the whole sampling window).
    since_progress_s: float | None = None
    since_progress_at_least: bool = False
    # Problems with this partition's numbers: unreadable offset, unknown watermarks ...
    problems: tuple[str, ...] = ()
    # Over time (only with several samples):
    status: str | None = None  # Burrow partition status: OK WARN STOP STALL REWIND
    consumption_rate: float | None = None  # records/s the committed offset advanced
    production_rate: float | None = None  # records/s the high watermark advanced
    time_lag_s: float | None = None  # estimated age of the next record to consume
    catch_up_s: float | None = None  # time to reach lag 0 at current rates; None: never
    complete: float | None = None  # fraction of samples that had numbers (Burrow's "complete")
    # Commits kept in the status evaluation whose lag was unknown (no high watermark then).
    commits_without_lag: int = 0
    # The owning member's client id and host, as the group coordinator reports them (the
    # CLIENT-ID and HOST columns of kafka-consumer-groups --describe); None for the old consumer.
    owner_client_id: str | None = None
    owner_host: str | None = None

    @property
    def partial(self) -> bool:
        return bool(self.problems) and self.lag is None


@dataclass(frozen=True)
class TopicLag:
    topic: str
    partitions: int
    total_lag: int
    max_lag: int | None
    unknown: int  # partitions whose lag is unknown (no offset or no watermark)
    consumption_rate: float | None = None
    production_rate: float | None = None


@dataclass(frozen=True)
class GroupLag:
    group: str
    source: str
    state: str | None
    members: tuple[GroupMember, ...]
    partitions: tuple[PartitionLag, ...]
    topics: tuple[TopicLag, ...]
    # Sum of the known positive partition lags (a lower bound when some are unknown); None when
    # nothing of the group's lag is known (not read, or no partition's lag could be computed).
    total_lag: int | None
    max_lag: int | None
    findings: tuple[Finding, ...]  # the KD6xx rules' (kafkadiag.rules.lagfamily), in code order
    errors: tuple[str, ...]
    exists: bool | None = True  # None: unknown, a source that could hold the group was unreachable
    status: str | None = None  # Burrow group status: OK WARN ERR (with several samples)
    consumption_rate: float | None = None
    production_rate: float | None = None
    catch_up_s: float | None = None

    @property
    def partial(self) -> bool:
        return bool(self.errors) or any(
            partition.problems and partition.lag is None for partition in self.partitions
        )


@dataclass(frozen=True)
class LagReport:
    taken_at_ms: int
    sources: tuple[tuple[str, str], ...]
    groups: tuple[GroupLag, ...]
    errors: tuple[str, ...]
    stats: tuple[tuple[str, int], ...]
    duration_ms: float = 0.0
    # Sources that could not be reached at all: ((source, why), ...), as in the snapshot.
    unreachable: tuple[tuple[str, str], ...] = ()
    samples: int = 1
    window_s: float = 0.0

    @property
    def partial(self) -> bool:
        return bool(self.errors) or any(group.partial or not group.exists for group in self.groups)


def known_sum_text(label: str, values: Sequence[int | None], counted: str = "partitions") -> str:
    """A sum of lags for a sentence, never counting an unknown one as 0: "committed lag 118",
    "committed lag at least 100 (2 of 6 partitions unknown)", or "committed lag unknown"."""
    known = [value for value in values if value is not None]
    unknown = len(values) - len(known)
    total = sum(value for value in known if value > 0)
    if not unknown:
        return f"{label} {total}"
    if not known:
        return f"{label} unknown"
    return f"{label} at least {total} ({unknown} of {len(values)} {counted} unknown)"
