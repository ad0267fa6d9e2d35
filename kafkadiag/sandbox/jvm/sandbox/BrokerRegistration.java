package sandbox;

import kafka.utils.ZkUtils;

/** What a ZooKeeper-based Kafka broker writes about itself and its topics, written here because
 *  the sandbox's broker keeps no state in ZooKeeper: the old consumer (and ConsumerOffsetChecker)
 *  find brokers, topics, partitions and leaders under /brokers. */
public final class BrokerRegistration {
    private BrokerRegistration() {}

    public static void register(ZkUtils zk, int brokerId, String host, int port) throws Exception {
        zk.createEphemeralPath(ZkUtils.BROKER_IDS_PATH + "/" + brokerId,
                "{\"jmx_port\":-1,\"timestamp\":\"" + System.currentTimeMillis() + "\",\"endpoints\":[\"PLAINTEXT://"
                        + host + ":" + port + "\"],\"host\":\"" + host + "\",\"version\":2,\"port\":" + port + "}");
    }

    public static void registerTopic(ZkUtils zk, String topic, int partitions, int leader) throws Exception {
        StringBuilder replicas = new StringBuilder();
        for (int p = 0; p < partitions; p++) {
            if (p > 0) replicas.append(',');
            replicas.append('"').append(p).append("\":[").append(leader).append(']');
        }
        String topicPath = ZkUtils.BROKER_TOPICS_PATH + "/" + topic;
        zk.updatePersistentPath(topicPath, "{\"version\":1,\"partitions\":{" + replicas + "}}");
        for (int p = 0; p < partitions; p++) {
            zk.updatePersistentPath(topicPath + "/partitions/" + p + "/state",
                    "{\"controller_epoch\":1,\"leader\":" + leader + ",\"version\":1,\"leader_epoch\":0,\"isr\":["
                            + leader + "]}");
        }
    }
}
