package com.example.orders;

import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The service's answer to "status", one JSON line: the offsets handled, and each stream queue's fill
 * as the consumer itself publishes it (its FetchQueueSize gauges, registered by metrics-core's
 * JmxReporter, the same MBeans kafkadiag reads from outside).
 */
final class Status {
    private Status() {}

    static String json(Progress progress, int capacity) throws Exception {
        StringBuilder out = new StringBuilder("{\"done\":{");
        String separator = "";
        for (Map.Entry<String, Long> entry : progress.snapshot().entrySet()) {
            out.append(separator).append('"').append(entry.getKey()).append("\":").append(entry.getValue());
            separator = ",";
        }
        out.append("},\"queues\":[");
        separator = "";
        for (Map.Entry<String, Integer> queue : queueSizes().entrySet()) {
            out.append(separator).append(String.format(Locale.ROOT,
                    "{\"topic\":\"%s\",\"size\":%d,\"capacity\":%d}", queue.getKey(), queue.getValue(), capacity));
            separator = ",";
        }
        return out.append("]}").toString();
    }

    /** Topic -> chunks queued for its stream (one stream per topic here). */
    private static Map<String, Integer> queueSizes() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Map<String, Integer> sizes = new TreeMap<>();
        ObjectName pattern = new ObjectName("kafka.consumer:type=ZookeeperConsumerConnector,name=FetchQueueSize,*");
        for (ObjectName name : server.queryNames(pattern, null)) {
            sizes.put(name.getKeyProperty("topic"), ((Number) server.getAttribute(name, "Value")).intValue());
        }
        return sizes;
    }
}
