package com.example.orders;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import kafka.consumer.Consumer;
import kafka.consumer.ConsumerConfig;
import kafka.consumer.KafkaStream;
import kafka.javaapi.consumer.ConsumerConnector;

/**
 * An order service on Apache Kafka's old (ZooKeeper-based) high-level consumer, written only
 * against the release's public API (kafka.consumer.Consumer, kafka.javaapi) and compiled against
 * the real 0.8.2.2 jars, as the services of the seeds' incident were.
 *
 * One connector (so one ConsumerFetcherThread per broker) reads every topic, one stream per topic,
 * each stream iterated by a worker of the service's own pool. The payments handler calls a payment
 * gateway; when the gateway stops answering, the payments stream stops draining, its queue fills,
 * the shared fetcher parks in put() holding its partition-map lock, and the other topics starve.
 *
 *   java -Dqueued.max.message.chunks=2 ... -cp <kafka jars>:<classes> com.example.orders.OrderService \
 *       --zookeeper HOST:PORT/CHROOT --group GROUP --topics orders,payments,shipments
 *
 * Consumer settings come from system properties named as Kafka names them, as many services of
 * the time took them. Commands on stdin, one answer line each (kafkadiag/sandbox/child.py):
 * "hang TOPIC" (the downstream that topic's handler calls stops answering), "status".
 */
public final class OrderService {
    // The consumer settings taken from system properties; the rest keep Kafka's defaults.
    private static final List<String> SETTINGS = List.of(
            "queued.max.message.chunks", "fetch.message.max.bytes", "auto.commit.interval.ms",
            "auto.offset.reset", "zookeeper.session.timeout.ms");

    private OrderService() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        Properties props = new Properties();
        props.put("zookeeper.connect", options.get("--zookeeper"));
        props.put("group.id", options.get("--group"));
        props.put("auto.offset.reset", "smallest");
        for (String name : SETTINGS) {
            String value = System.getProperty(name);
            if (value != null) {
                props.put(name, value);
            }
        }
        ConsumerConfig config = new ConsumerConfig(props);
        ConsumerConnector connector = Consumer.createJavaConsumerConnector(config);

        Map<String, Integer> streamsPerTopic = new LinkedHashMap<>();
        for (String topic : options.get("--topics").split(",")) {
            streamsPerTopic.put(topic, 1);
        }
        Map<String, List<KafkaStream<byte[], byte[]>>> streams = connector.createMessageStreams(streamsPerTopic);

        Progress progress = new Progress();
        Map<String, PaymentGateway> downstreams = new LinkedHashMap<>();
        List<StreamWorker> workers = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String topic : streamsPerTopic.keySet()) {
            RecordHandler handler;
            if (topic.equals("payments")) {
                PaymentGateway gateway = new PaymentGateway();
                downstreams.put(topic, gateway);
                handler = new PaymentHandler(gateway);
            } else {
                handler = new LedgerHandler();
            }
            workers.add(new StreamWorker(streams.get(topic).get(0), handler, progress));
            names.add("order-worker-" + topic);
        }
        // The n-th task submitted to a fresh fixed pool runs on the n-th thread it creates, so each
        // worker thread carries its topic's name, as an operator would want to see it in a dump.
        ExecutorService pool = Executors.newFixedThreadPool(workers.size(), new NamedThreadFactory(names));
        for (StreamWorker worker : workers) {
            pool.submit(worker);
        }
        System.out.println("READY");
        System.out.flush();

        serveCommands(downstreams, progress, config.queuedMaxMessages());
        // stdin closed: a service keeps serving until it is stopped (by PID).
        Thread.currentThread().join();
    }

    private static void serveCommands(Map<String, PaymentGateway> downstreams, Progress progress, int capacity)
            throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            String reply;
            if (words[0].equals("hang") && words.length == 2 && downstreams.containsKey(words[1])) {
                downstreams.get(words[1]).stopAnswering();
                reply = "OK";
            } else if (words[0].equals("hang")) {
                reply = "ERROR no handler with a downstream call for " + String.join(" ", words);
            } else if (words[0].equals("status")) {
                reply = "STATUS " + Status.json(progress, capacity);
            } else {
                reply = "ERROR unknown command " + words[0];
            }
            System.out.println(reply);
            System.out.flush();
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        for (String required : List.of("--zookeeper", "--group", "--topics")) {
            if (!options.containsKey(required)) {
                System.err.println("usage: OrderService --zookeeper ZK --group GROUP --topics T1,T2,...");
                System.exit(2);
            }
        }
        return options;
    }
}
