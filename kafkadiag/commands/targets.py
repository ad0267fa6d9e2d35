"""What the connection options name: the lag target shared by lag, check and diagnose, and the
ZooKeeper security settings every command taking those options reads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from kafkadiag.console import say

if TYPE_CHECKING:  # imported when used: `kafkadiag dump parse` starts without the clients
    from kafkadiag.collect.gather import LagTarget


def zookeeper_security() -> Any:
    """The ZooKeeper security settings of the running command (TLS file, JAAS file, environment)."""
    from kafkadiag.collect.zookeeper.security import read_security

    meta = click.get_current_context().meta
    return read_security(meta.get("kafkadiag.zk_tls_config_file"), meta.get("kafkadiag.zk_jaas_file"))


def lag_target(
    bootstrap_server: str | None,
    zookeeper: str | None,
    command_config: str | None,
    groups: tuple[str, ...],
    all_groups: bool,
    topics: tuple[str, ...],
    timeout: float,
) -> LagTarget:
    """The LagTarget of the connection options, validated (UsageError otherwise)."""
    from kafkadiag.collect.gather import build_lag_target

    target, notes = build_lag_target(
        bootstrap_server, zookeeper, command_config, groups, all_groups, topics, timeout, zookeeper_security()
    )
    for note in notes:
        say(f"kafkadiag: note: {note}")
    target.validate()
    return target
