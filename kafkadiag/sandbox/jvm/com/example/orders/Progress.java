package com.example.orders;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** The next offset to handle per partition ("topic-partition"), as the workers handle records. */
final class Progress {
    private final Map<String, Long> next = new ConcurrentHashMap<>();

    void handled(String topic, int partition, long offset) {
        next.merge(topic + "-" + partition, offset + 1, Math::max);
    }

    Map<String, Long> snapshot() {
        return new TreeMap<>(next);
    }
}
