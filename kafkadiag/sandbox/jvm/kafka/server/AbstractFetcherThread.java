package kafka.server;

import com.yammer.metrics.reporting.JmxReporter;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import kafka.api.FetchResponse;
import kafka.common.TopicAndPartition;
import kafka.consumer.SimpleConsumer;
import kafka.utils.ShutdownableThread;
import kafka.utils.Utils;

/** Kafka 0.8.2's AbstractFetcherThread. processFetchRequest() fetches outside the lock, then
 *  hands each partition's data to processPartitionData() while holding partitionMapLock (inLock):
 *  when one stream's queue is full the fetcher parks in put() still owning the lock, every other
 *  partition of this fetcher stops, and its lag gauges (FetcherLagMetrics) freeze. */
public abstract class AbstractFetcherThread extends ShutdownableThread {
    private final Map<TopicAndPartition, Long> partitionMap = new LinkedHashMap<>();
    private final ReentrantLock partitionMapLock = new ReentrantLock();
    private final Condition partitionMapCond = partitionMapLock.newCondition();
    private final Map<TopicAndPartition, AtomicLong> lagByPartition = new ConcurrentHashMap<>();
    protected final SimpleConsumer simpleConsumer;
    private final String clientId;
    private final String brokerHost;
    private final int brokerPort;
    private final int maxWaitMs;
    private final int minBytes;
    private final int fetchSize;
    private final JmxReporter.Meter requestRate;
    private final JmxReporter.Meter byteRate;

    protected AbstractFetcherThread(String name, String clientId, String brokerHost, int brokerPort,
                                    int socketTimeoutMs, int fetchSize, int maxWaitMs, int minBytes) {
        super(name);
        this.clientId = clientId;
        this.brokerHost = brokerHost;
        this.brokerPort = brokerPort;
        this.fetchSize = fetchSize;
        this.maxWaitMs = maxWaitMs;
        this.minBytes = minBytes;
        this.simpleConsumer = new SimpleConsumer(brokerHost, brokerPort, socketTimeoutMs, clientId);
        String stats = "kafka.server:type=FetcherStats,name=%s,clientId=" + clientId
                + ",brokerHost=" + brokerHost + ",brokerPort=" + brokerPort;
        this.requestRate = JmxReporter.meter(String.format(stats, "RequestsPerSec"), "requests");
        this.byteRate = JmxReporter.meter(String.format(stats, "BytesPerSec"), "bytes");
    }

    /** The consumer's implementation enqueues the data for the partition's stream. */
    public abstract void processPartitionData(TopicAndPartition tp, long fetchOffset,
                                              FetchResponse.PartitionData data) throws InterruptedException;

    @Override
    public void doWork() throws InterruptedException {
        Map<TopicAndPartition, Long> fetchRequest = Utils.inLock(partitionMapLock, () -> {
            if (partitionMap.isEmpty()) partitionMapCond.await(200L, TimeUnit.MILLISECONDS);
            return new LinkedHashMap<>(partitionMap);
        });
        if (!fetchRequest.isEmpty()) processFetchRequest(fetchRequest);
    }

    private void processFetchRequest(Map<TopicAndPartition, Long> fetchRequest) throws InterruptedException {
        FetchResponse response;
        try {
            response = simpleConsumer.fetch(fetchRequest, maxWaitMs, minBytes, fetchSize);
        } catch (IOException e) {
            System.err.println(getName() + ": error in fetch " + e);
            Thread.sleep(200);
            return;
        }
        requestRate.mark(1);
        Utils.inLock(partitionMapLock, () -> {
            for (Map.Entry<TopicAndPartition, FetchResponse.PartitionData> e : response.data.entrySet()) {
                TopicAndPartition tp = e.getKey();
                FetchResponse.PartitionData data = e.getValue();
                Long currentOffset = partitionMap.get(tp);
                // only process the data if the offset is still the one that was asked for
                if (currentOffset == null || !currentOffset.equals(fetchRequest.get(tp)) || data.error != 0) continue;
                long newOffset = data.messageOffsets.isEmpty()
                        ? currentOffset : data.messageOffsets.get(data.messageOffsets.size() - 1) + 1;
                partitionMap.put(tp, newOffset);
                lagGauge(tp).set(Math.max(0, data.highWatermark - newOffset));
                byteRate.mark(data.bytes);
                processPartitionData(tp, currentOffset, data);
            }
            return null;
        });
    }

    /** FetcherLagMetrics: the partition's high watermark minus the fetcher's next offset. */
    private AtomicLong lagGauge(TopicAndPartition tp) {
        return lagByPartition.computeIfAbsent(tp, key -> {
            AtomicLong lag = new AtomicLong();
            JmxReporter.gauge("kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=" + clientId
                    + ",topic=" + key.topic() + ",partition=" + key.partition(), lag::get);
            return lag;
        });
    }

    public long maxLag() {
        long max = 0;
        for (AtomicLong lag : lagByPartition.values()) max = Math.max(max, lag.get());
        return max;
    }

    public double requestRate() {
        return requestRate.getOneMinuteRate();
    }

    public void addPartitions(Map<TopicAndPartition, Long> partitionAndOffsets) throws InterruptedException {
        partitionMapLock.lockInterruptibly();
        try {
            partitionMap.putAll(partitionAndOffsets);
            partitionMapCond.signalAll();
        } finally {
            partitionMapLock.unlock();
        }
    }

    public String brokerAddress() {
        return brokerHost + ":" + brokerPort;
    }
}
