"""Kafka-stored consumer groups and partition watermarks, read through kafka-python."""
