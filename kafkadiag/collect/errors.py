"""Errors of the collectors: each says what to check, and exits 3 (input unreachable)."""

from __future__ import annotations

from kafkadiag.errors import InputUnreadableError, UsageError


class ZooKeeperUnreachableError(InputUnreadableError):
    HELP_TEXT = (
        "Check --zookeeper (host:port[,host:port...][/chroot], default from $KAFKADIAG_ZOOKEEPER), "
        "that ZooKeeper is running and reachable from this host (e.g. `echo srvr | nc HOST PORT`), "
        "and raise --timeout if the network is slow."
    )


class BrokerUnreachableError(InputUnreadableError):
    HELP_TEXT = (
        "Check --bootstrap-server (host:port[,host:port...], default from $KAFKADIAG_BOOTSTRAP_SERVER), "
        "that the brokers are running and reachable from this host, that the listener's security "
        "settings match --command-config, and raise --timeout if the network is slow."
    )


class BrokerRefusedCredentialsError(BrokerUnreachableError):
    """The broker answered and refused the SASL credentials: reached, but not read."""

    HELP_TEXT = (
        "Check the user and password in sasl.jaas.config and sasl.mechanism in --command-config "
        "against the broker's listener (kafka-consumer-groups --command-config with the same file "
        "fails the same way)."
    )


class GroupNotFoundError(InputUnreadableError):
    HELP_TEXT = (
        "Check the group name (list them with --all-groups); old (ZooKeeper-based) consumers need "
        "--zookeeper with the right chroot, new consumers need --bootstrap-server."
    )


class CommandConfigError(UsageError):
    HELP_TEXT = (
        "--command-config takes a Java properties file as Kafka's tools do: security.protocol, "
        "sasl.mechanism, sasl.jaas.config, ssl.truststore.type=PEM with ssl.truststore.location, "
        "ssl.keystore.type=PEM with ssl.keystore.location, ssl.key.password, "
        "ssl.endpoint.identification.algorithm. See docs/lag.md."
    )


class SnapshotReadError(InputUnreadableError):
    HELP_TEXT = "Point `kafkadiag lag history` at a directory written by `kafkadiag lag --record DIR`."
