"""Apache Kafka's message schemas for requests kafka-python 3.0 does not define, copied unchanged
from Apache Kafka (clients/src/main/resources/common/message, Apache License 2.0, the licence
header kept in each file): ConsumerGroupDescribe (KIP-848, Kafka 3.7+)."""
