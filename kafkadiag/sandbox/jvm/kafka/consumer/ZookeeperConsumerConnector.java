package kafka.consumer;

import com.yammer.metrics.reporting.JmxReporter;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import kafka.common.TopicAndPartition;
import kafka.utils.ZkUtils;

/** Kafka 0.8.2's ZookeeperConsumerConnector for the only consumer of its group on one broker:
 *  registers itself under /consumers/group/ids, owns every partition of its topics (range
 *  assignment over its threads) under /consumers/group/owners, starts fetching from the committed
 *  offsets, and auto-commits consumed offsets to /consumers/group/offsets, writing a node only
 *  when its offset changed. One bounded queue per (topic, thread), its size published as the
 *  FetchQueueSize gauge. */
public final class ZookeeperConsumerConnector {
    private final ConsumerConfig config;
    private final ZkUtils zkUtils;
    public final String consumerIdString;
    private final ConsumerFetcherManager fetcherManager;
    private final Map<TopicAndPartition, PartitionTopicInfo> topicRegistry = new LinkedHashMap<>();
    private final Map<TopicAndPartition, Long> checkpointedOffsets = new LinkedHashMap<>();
    private final List<KafkaStream> streams = new ArrayList<>();
    private final ConsumerTopicStats topicStats;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kafka-consumer-scheduler-0");
        t.setDaemon(true);
        return t;
    });

    public ZookeeperConsumerConnector(ConsumerConfig config) throws Exception {
        this.config = config;
        this.zkUtils = new ZkUtils(config.zkConnect, config.zkSessionTimeoutMs);
        // <group>_<host>-<start millis>-<first 8 hex digits of a random UUID>
        this.consumerIdString = config.groupId + "_" + InetAddress.getLocalHost().getHostName() + "-"
                + System.currentTimeMillis() + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.fetcherManager = new ConsumerFetcherManager(consumerIdString, config);
        this.topicStats = new ConsumerTopicStats(config.clientId);
    }

    /** topicCountMap: topic -> number of streams (consumer threads). */
    public Map<String, List<KafkaStream>> createMessageStreams(Map<String, Integer> topicCountMap, int brokerId,
                                                               String brokerHost, int brokerPort) throws Exception {
        registerConsumerInZK(topicCountMap);
        Map<String, List<KafkaStream>> result = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> topicCount : topicCountMap.entrySet()) {
            String topic = topicCount.getKey();
            List<KafkaStream> topicStreams = new ArrayList<>();
            for (int threadId = 0; threadId < topicCount.getValue(); threadId++) {
                LinkedBlockingQueue<FetchedDataChunk> queue = new LinkedBlockingQueue<>(config.queuedMaxMessageChunks);
                KafkaStream stream = new KafkaStream(topic, threadId, queue, topicStats);
                topicStreams.add(stream);
                streams.add(stream);
                JmxReporter.gauge("kafka.consumer:type=ZookeeperConsumerConnector,name=FetchQueueSize,clientId="
                        + config.clientId + ",topic=" + topic + ",threadId=" + threadId, queue::size);
            }
            assignPartitions(topic, topicStreams);
            result.put(topic, topicStreams);
        }
        fetcherManager.startConnections(brokerId, brokerHost, brokerPort, topicRegistry);
        scheduler.scheduleAtFixedRate(this::autoCommit, config.autoCommitIntervalMs, config.autoCommitIntervalMs,
                TimeUnit.MILLISECONDS);
        return result;
    }

    private void registerConsumerInZK(Map<String, Integer> topicCountMap) throws Exception {
        StringBuilder subscription = new StringBuilder();
        for (Map.Entry<String, Integer> e : topicCountMap.entrySet()) {
            if (subscription.length() > 0) subscription.append(',');
            subscription.append('"').append(e.getKey()).append("\":").append(e.getValue());
        }
        zkUtils.createEphemeralPath(ZkUtils.consumerIdsPath(config.groupId) + "/" + consumerIdString,
                "{\"version\":1,\"subscription\":{" + subscription + "},\"pattern\":\"static\",\"timestamp\":\""
                        + System.currentTimeMillis() + "\"}");
    }

    /** Range assignment of the topic's partitions over this consumer's threads, ownership claimed,
     *  fetching from the committed offset (or the log start: auto.offset.reset=smallest). */
    private void assignPartitions(String topic, List<KafkaStream> topicStreams) throws Exception {
        List<Integer> partitions = new ArrayList<>();
        for (String child : zkUtils.getChildren("/brokers/topics/" + topic + "/partitions"))
            partitions.add(Integer.parseInt(child));
        partitions.sort(null);
        int threads = topicStreams.size();
        int perThread = partitions.size() / threads, extra = partitions.size() % threads;
        for (int position = 0; position < threads; position++) {
            int start = perThread * position + Math.min(position, extra);
            int count = perThread + (position < extra ? 1 : 0);
            KafkaStream stream = topicStreams.get(position);
            for (int i = start; i < start + count; i++) {
                int partition = partitions.get(i);
                zkUtils.createEphemeralPath(ZkUtils.ownersPath(config.groupId, topic) + "/" + partition,
                        consumerIdString + "-" + stream.threadId);
                String committed = zkUtils.readDataMaybeNull(ZkUtils.offsetsPath(config.groupId, topic) + "/" + partition);
                long offset = committed == null ? 0L : Long.parseLong(committed.trim());
                TopicAndPartition tp = new TopicAndPartition(topic, partition);
                topicRegistry.put(tp, new PartitionTopicInfo(topic, partition, stream.queue, offset));
                checkpointedOffsets.put(tp, committed == null ? -1L : offset);
            }
        }
    }

    /** commitOffsets(): the consumed offset of every owned partition whose offset moved. */
    private void autoCommit() {
        try {
            for (Map.Entry<TopicAndPartition, PartitionTopicInfo> e : topicRegistry.entrySet()) {
                long consumed = e.getValue().getConsumeOffset();
                if (checkpointedOffsets.get(e.getKey()) == consumed) continue;
                zkUtils.updatePersistentPath(ZkUtils.offsetsPath(config.groupId, e.getKey().topic()) + "/"
                        + e.getKey().partition(), Long.toString(consumed));
                checkpointedOffsets.put(e.getKey(), consumed);
            }
        } catch (Exception error) {
            System.err.println("exception during autoCommit: " + error);
        }
    }

    public Map<TopicAndPartition, PartitionTopicInfo> topicRegistry() {
        return topicRegistry;
    }

    public List<KafkaStream> streams() {
        return streams;
    }

    public void shutdown() throws InterruptedException {
        scheduler.shutdownNow();
        fetcherManager.stopConnections();
        zkUtils.close();
    }
}
