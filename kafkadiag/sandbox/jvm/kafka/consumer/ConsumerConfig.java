package kafka.consumer;

import java.util.Properties;

/** The settings of Kafka 0.8.2's ConsumerConfig that the replica uses, with their defaults. A
 *  setting missing from the properties is taken from the JVM's system properties, so tools reading
 *  them over JMX see the values in force. */
public final class ConsumerConfig {
    public final String groupId;
    public final String clientId;
    public final String zkConnect;
    public final int queuedMaxMessageChunks;
    public final int fetchMessageMaxBytes;
    public final int fetchWaitMaxMs;
    public final int fetchMinBytes;
    public final int socketTimeoutMs;
    public final long autoCommitIntervalMs;
    public final int zkSessionTimeoutMs;

    public ConsumerConfig(Properties props) {
        groupId = get(props, "group.id", null);
        if (groupId == null) throw new IllegalArgumentException("group.id is required");
        clientId = get(props, "client.id", groupId);
        zkConnect = get(props, "zookeeper.connect", null);
        queuedMaxMessageChunks = Integer.parseInt(get(props, "queued.max.message.chunks", "2"));
        fetchMessageMaxBytes = Integer.parseInt(get(props, "fetch.message.max.bytes", String.valueOf(1024 * 1024)));
        fetchWaitMaxMs = Integer.parseInt(get(props, "fetch.wait.max.ms", "100"));
        fetchMinBytes = Integer.parseInt(get(props, "fetch.min.bytes", "1"));
        socketTimeoutMs = Integer.parseInt(get(props, "socket.timeout.ms", "30000"));
        autoCommitIntervalMs = Long.parseLong(get(props, "auto.commit.interval.ms", "60000"));
        zkSessionTimeoutMs = Integer.parseInt(get(props, "zookeeper.session.timeout.ms", "6000"));
    }

    private static String get(Properties props, String name, String fallback) {
        return props.getProperty(name, System.getProperty(name, fallback));
    }
}
