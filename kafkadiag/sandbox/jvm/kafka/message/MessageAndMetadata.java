package kafka.message;

/** What a stream's iterator hands the application: one record and where it came from. */
public record MessageAndMetadata(String topic, int partition, long offset) {}
