package kafka.common;

/** A topic's partition, as Kafka 0.8.2 keys its fetcher and offset maps. */
public record TopicAndPartition(String topic, int partition) {
    @Override
    public String toString() {
        return "[" + topic + "," + partition + "]";
    }
}
