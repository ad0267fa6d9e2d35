"""Shell completion's answers (click's `_KAFKADIAG_COMPLETE` protocol, docs/completion.md): files
for path arguments, rule codes and names for `explain`, `--select` and `--ignore`, and consumer
groups for `--group`, read from the `--zookeeper` or `--bootstrap-server` already typed.

A completion runs on every Tab press, so asking a cluster is bounded by COMPLETION_TIMEOUT_S and
silent on any failure: no group offered is better than an error in the middle of a command
line. It is read-only like everything else (a ZooKeeper children read, Kafka's ListGroups).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import click
from click.shell_completion import CompletionItem

# Long enough for a cluster on the same network; short enough that a Tab press never hangs.
COMPLETION_TIMEOUT_S = 2.0


def complete_paths(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Files: the shell's own file completion (bash, zsh and fish each do it their way)."""
    return [CompletionItem(incomplete, type="file")]


def complete_directories(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(incomplete, type="dir")]


def complete_rules(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Rule codes (KD201), then names (fetcher-blocked-on-full-queue), each with its title."""
    from kafkadiag.rules.engine import RULES

    wanted = incomplete.lower()
    ordered = sorted(RULES, key=lambda rule: rule.code)
    codes = [
        CompletionItem(rule.code, help=rule.title) for rule in ordered if rule.code.lower().startswith(wanted)
    ]
    names = [CompletionItem(rule.name, help=rule.title) for rule in ordered if rule.name.startswith(wanted)]
    return codes + names if wanted else codes


def complete_groups(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The consumer groups of the cluster named on the command line so far (or in the environment)."""
    deadline = time.monotonic() + COMPLETION_TIMEOUT_S
    groups: set[str] = set()
    zookeeper, bootstrap = ctx.params.get("zookeeper"), ctx.params.get("bootstrap_server")
    try:
        if zookeeper:
            groups.update(_zookeeper_groups(zookeeper, deadline))
        if bootstrap and time.monotonic() < deadline:
            groups.update(_kafka_groups(bootstrap, deadline))
    except Exception:  # noqa: BLE001 - completion is silent: a failure offers what was found so far
        pass
    return [CompletionItem(group) for group in sorted(groups) if group.startswith(incomplete)]


def _zookeeper_groups(zookeeper: str, deadline: float) -> Iterable[str]:
    """The old consumer's groups: the children of /consumers (under the chroot, if one is given)."""
    from kafkadiag.collect.zookeeper.scan import connect
    from kafkadiag.collect.zookeeper.session import GET_CHILDREN

    session = connect(zookeeper, max(deadline - time.monotonic(), 0.1))
    try:
        (children,) = session.wave(GET_CHILDREN, ["/consumers"], deadline)
    finally:
        session.close(wait_s=0.2)
    return children if isinstance(children, list) else ()


def _kafka_groups(bootstrap: str, deadline: float) -> Iterable[str]:
    """Groups the brokers coordinate, by ListGroups on each broker (Kafka 0.9 and later)."""
    from kafkadiag.collect.kafka.client import open_client
    from kafkadiag.collect.kafka.requests import ListGroupsRequest

    client: Any = open_client(bootstrap, {}, max(deadline - time.monotonic(), 0.1))
    try:
        if not client.accepts(ListGroupsRequest()):
            return []
        calls = [(broker, ListGroupsRequest()) for broker in sorted(client.brokers)]
        groups = []
        for listing, reason in client.round(calls, deadline):
            if reason is None and listing is not None and not listing.error_code:
                # "consumer" groups, and "" for groups that only ever committed offsets.
                groups += [
                    group.group_id for group in listing.groups if group.protocol_type in ("consumer", "")
                ]
        return groups
    finally:
        client.close()
