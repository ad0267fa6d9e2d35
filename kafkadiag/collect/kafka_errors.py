"""Names of the Kafka error codes a read can meet, as Apache Kafka's `Errors` enum spells them
(the names brokers log and Kafka's tools print)."""

from __future__ import annotations

_NAMES = {
    -1: "UNKNOWN_SERVER_ERROR",
    1: "OFFSET_OUT_OF_RANGE",
    2: "CORRUPT_MESSAGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER",
    7: "REQUEST_TIMED_OUT",
    8: "BROKER_NOT_AVAILABLE",
    9: "REPLICA_NOT_AVAILABLE",
    13: "NETWORK_EXCEPTION",
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
    17: "INVALID_TOPIC_EXCEPTION",
    24: "INVALID_GROUP_ID",
    25: "UNKNOWN_MEMBER_ID",
    27: "REBALANCE_IN_PROGRESS",
    29: "TOPIC_AUTHORIZATION_FAILED",
    30: "GROUP_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    33: "UNSUPPORTED_SASL_MECHANISM",
    34: "ILLEGAL_SASL_STATE",
    35: "UNSUPPORTED_VERSION",
    41: "NOT_CONTROLLER",
    42: "INVALID_REQUEST",
    56: "KAFKA_STORAGE_ERROR",
    58: "SASL_AUTHENTICATION_FAILED",
    69: "GROUP_ID_NOT_FOUND",
    72: "LISTENER_NOT_FOUND",
    74: "FENCED_LEADER_EPOCH",
    75: "UNKNOWN_LEADER_EPOCH",
    78: "OFFSET_NOT_AVAILABLE",
    88: "UNSTABLE_OFFSET_COMMIT",
    89: "THROTTLING_QUOTA_EXCEEDED",
    100: "UNKNOWN_TOPIC_ID",
}


def error_name(code: int) -> str | None:
    """None for 0 (no error); the Kafka name, or "error code N" for codes not listed."""
    if not code:
        return None
    return _NAMES.get(code, f"error code {code}")
