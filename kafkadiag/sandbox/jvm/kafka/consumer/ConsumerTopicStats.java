package kafka.consumer;

import com.yammer.metrics.reporting.JmxReporter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Kafka 0.8.2's ConsumerTopicStats: MessagesPerSec and BytesPerSec meters per topic and over all
 *  topics, marked by the stream iterators as the application takes each message. */
public final class ConsumerTopicStats {
    private final String clientId;
    private final Map<String, JmxReporter.Meter[]> byTopic = new ConcurrentHashMap<>();
    private final JmxReporter.Meter[] allTopics;

    public ConsumerTopicStats(String clientId) {
        this.clientId = clientId;
        this.allTopics = meters("");
    }

    private JmxReporter.Meter[] meters(String topicTag) {
        String prefix = "kafka.consumer:type=ConsumerTopicMetrics,name=";
        String tags = ",clientId=" + clientId + topicTag;
        return new JmxReporter.Meter[] {
            JmxReporter.meter(prefix + "MessagesPerSec" + tags, "messages"),
            JmxReporter.meter(prefix + "BytesPerSec" + tags, "bytes"),
        };
    }

    public void record(String topic, long bytes) {
        JmxReporter.Meter[] topicMeters = byTopic.computeIfAbsent(topic, name -> meters(",topic=" + name));
        for (JmxReporter.Meter[] meters : new JmxReporter.Meter[][] {topicMeters, allTopics}) {
            meters[0].mark(1);
            meters[1].mark(bytes);
        }
    }
}
