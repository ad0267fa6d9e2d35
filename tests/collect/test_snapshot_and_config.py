"""Snapshots are plain data (pickle and JSON round trips); --command-config reads Kafka's keys."""

from __future__ import annotations

import json
import pickle

import pytest

from kafkadiag.collect.config import kafka_python_config, parse_properties
from kafkadiag.collect.errors import CommandConfigError
from kafkadiag.lag.snapshot import (
    SOURCE_ZOOKEEPER,
    BrokerPartition,
    CommittedOffset,
    GroupMember,
    GroupSnapshot,
    Snapshot,
    TopicLayout,
    from_json,
    to_json,
)

SNAPSHOT = Snapshot(
    taken_at_ms=1_700_000_000_000,
    duration_ms=12.5,
    sources=(("zookeeper", "zk:2181/kafka"),),
    groups=(
        GroupSnapshot(
            "g",
            SOURCE_ZOOKEEPER,
            members=(GroupMember("g_h-1-abcdef12", host="h", subscription=(("t", 2),), pattern="static"),),
            offsets=(
                CommittedOffset(
                    "t",
                    0,
                    offset=5,
                    commit_time_ms=1,
                    owner="g_h-1-abcdef12-0",
                    path="/consumers/g/offsets/t/0",
                ),
                CommittedOffset("t", 1, raw_value="abc", error="not a decimal offset"),
            ),
            errors=("x",),
        ),
    ),
    partitions=(BrokerPartition("t", 0, leader=1, high_watermark=9, log_start_offset=0),),
    topics=(TopicLayout("t", SOURCE_ZOOKEEPER, partitions=(0, 1), leaders=((0, 1),)),),
    errors=("session lost",),
    stats=(("zookeeper_reads", 7),),
)


def test_snapshot_round_trips_through_json_and_pickle() -> None:
    assert from_json(json.loads(json.dumps(to_json(SNAPSHOT)))) == SNAPSHOT
    assert pickle.loads(pickle.dumps(SNAPSHOT)) == SNAPSHOT


def test_another_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="not a kafkadiag.lag.snapshot document"):
        from_json({"schema": "other"})


def test_command_config_as_kafka_tools_take_it() -> None:
    properties = parse_properties(
        "# comment\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="ops" password="s3\\"cret";\n'
        "ssl.truststore.type=PEM\n"
        "ssl.truststore.location=/etc/kafka/ca.pem\n"
        "ssl.endpoint.identification.algorithm=\n"
        "linger.ms=5\n"
    )
    config, notes = kafka_python_config(properties)
    assert config == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "ops",
        "sasl_plain_password": 's3"cret',
        "ssl_cafile": "/etc/kafka/ca.pem",
        "ssl_check_hostname": False,
    }
    assert notes == ["--command-config: linger.ms is not used by kafkadiag"]


def test_a_jks_truststore_says_how_to_convert_it() -> None:
    with pytest.raises(CommandConfigError) as raised:
        kafka_python_config({"security.protocol": "SSL", "ssl.truststore.location": "/x.jks"})
    assert "keytool -importkeystore" in raised.value.help_text
