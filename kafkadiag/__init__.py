"""kafkadiag: diagnose Kafka consumer stalls and lag from thread dumps, ZooKeeper and brokers."""

__version__ = "0.1.0"
