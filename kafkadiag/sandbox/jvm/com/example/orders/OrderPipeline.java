package com.example.orders;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import kafka.common.TopicAndPartition;
import kafka.consumer.ConsumerConfig;
import kafka.consumer.KafkaStream;
import kafka.consumer.PartitionTopicInfo;
import kafka.consumer.ZookeeperConsumerConnector;
import kafka.utils.ZkUtils;
import sandbox.BrokerRegistration;

/** An order-processing service built on the old (ZooKeeper-based) consumer: one connector, one
 *  stream per topic, each stream iterated on a thread of a fixed pool (pool-1-thread-N).
 *
 *  Arguments: --zookeeper HOST:PORT --group G --broker ID:HOST:PORT --topic NAME:PARTITIONS ...
 *  Consumer settings come from system properties (queued.max.message.chunks, auto.commit.interval.ms ...).
 *  Commands on stdin, one answer line each: "hang TOPIC" (that topic's handler stops returning),
 *  "recover TOPIC", "status" (STATUS {json}), "exit". */
public final class OrderPipeline {
    public static void main(String[] args) throws Exception {
        String zookeeper = null, group = null, brokerHost = "127.0.0.1";
        int brokerId = 0, brokerPort = 9092;
        Map<String, Integer> partitionsByTopic = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            String value = args[i + 1];
            switch (args[i]) {
                case "--zookeeper" -> zookeeper = value;
                case "--group" -> group = value;
                case "--broker" -> {
                    String[] parts = value.split(":");
                    brokerId = Integer.parseInt(parts[0]);
                    brokerHost = parts[1];
                    brokerPort = Integer.parseInt(parts[2]);
                }
                case "--topic" -> {
                    String[] parts = value.split(":");
                    partitionsByTopic.put(parts[0], Integer.parseInt(parts[1]));
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        Properties props = new Properties();
        props.setProperty("zookeeper.connect", zookeeper);
        props.setProperty("group.id", group);
        ConsumerConfig config = new ConsumerConfig(props);

        // Kept open for the JVM's life: the broker's registration node is ephemeral.
        ZkUtils registration = new ZkUtils(zookeeper, config.zkSessionTimeoutMs);
        BrokerRegistration.register(registration, brokerId, brokerHost, brokerPort);
        for (Map.Entry<String, Integer> topic : partitionsByTopic.entrySet())
            BrokerRegistration.registerTopic(registration, topic.getKey(), topic.getValue(), brokerId);

        ZookeeperConsumerConnector connector = new ZookeeperConsumerConnector(config);
        Map<String, Integer> topicCountMap = new LinkedHashMap<>();
        for (String topic : partitionsByTopic.keySet()) topicCountMap.put(topic, 1);
        Map<String, List<KafkaStream>> streams = connector.createMessageStreams(topicCountMap, brokerId, brokerHost,
                brokerPort);
        ExecutorService pool = Executors.newFixedThreadPool(topicCountMap.size());
        Map<String, OrderHandler> handlers = new LinkedHashMap<>();
        for (Map.Entry<String, List<KafkaStream>> topic : streams.entrySet()) {
            OrderHandler handler = new OrderHandler();
            handlers.put(topic.getKey(), handler);
            for (KafkaStream stream : topic.getValue()) pool.submit(new StreamWorker(stream, handler));
        }
        System.out.println("CONSUMER " + connector.consumerIdString);
        System.out.println("READY");
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            String reply;
            try {
                reply = switch (words[0]) {
                    case "hang", "recover" -> {
                        OrderHandler handler = handlers.get(words[1]);
                        if (handler == null) throw new IllegalArgumentException("no topic " + words[1]);
                        handler.warehouse().setHung(words[0].equals("hang"));
                        yield "OK";
                    }
                    case "status" -> "STATUS " + status(connector, config);
                    case "exit" -> {
                        connector.shutdown();
                        pool.shutdownNow();
                        System.out.println("OK");
                        System.out.flush();
                        System.exit(0);
                        yield "OK";
                    }
                    default -> "ERROR unknown command " + words[0];
                };
            } catch (RuntimeException e) {
                reply = "ERROR " + e;
            }
            System.out.println(reply);
            System.out.flush();
        }
        Thread.currentThread().join(); // stdin closed: keep serving until stopped by PID
    }

    private static String status(ZookeeperConsumerConnector connector, ConsumerConfig config) {
        StringBuilder out = new StringBuilder("{\"consumer_id\":\"").append(connector.consumerIdString)
                .append("\",\"queues\":[");
        boolean first = true;
        for (KafkaStream stream : connector.streams()) {
            if (!first) out.append(',');
            first = false;
            out.append(String.format(Locale.ROOT, "{\"topic\":\"%s\",\"thread_id\":%d,\"size\":%d,\"capacity\":%d}",
                    stream.topic, stream.threadId, stream.queue.size(), config.queuedMaxMessageChunks));
        }
        out.append("],\"partitions\":[");
        first = true;
        for (Map.Entry<TopicAndPartition, PartitionTopicInfo> e : connector.topicRegistry().entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append(String.format(Locale.ROOT,
                    "{\"topic\":\"%s\",\"partition\":%d,\"fetched_offset\":%d,\"consumed_offset\":%d}",
                    e.getKey().topic(), e.getKey().partition(), e.getValue().getFetchOffset(),
                    e.getValue().getConsumeOffset()));
        }
        return out.append("]}").toString();
    }
}
