"""Names of Kafka error codes as Apache Kafka's `Errors` enum spells them (the names brokers log
and Kafka's tools print), from kafka-python's table of broker errors."""

from __future__ import annotations

import kafka.errors

# kafka-python calls -1 "UNKNOWN"; Kafka's enum and its tools say UNKNOWN_SERVER_ERROR.
_RENAMED = {-1: "UNKNOWN_SERVER_ERROR"}


def error_name(code: int) -> str | None:
    """None for 0 (no error); the Kafka name, or "error code N" for a code kafka-python does not know."""
    if not code:
        return None
    if code in _RENAMED:
        return _RENAMED[code]
    known = kafka.errors.for_code(code)
    # for_code makes a class for a code it does not know; its message is UNKNOWN's.
    if known.__name__ == "UnrecognizedBrokerError":
        return f"error code {code}"
    return str(known.message)
