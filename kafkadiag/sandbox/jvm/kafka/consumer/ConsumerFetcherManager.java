package kafka.consumer;

import com.yammer.metrics.reporting.JmxReporter;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import kafka.common.TopicAndPartition;
import kafka.utils.ShutdownableThread;

/** Kafka 0.8.2's ConsumerFetcherManager with one broker and num.consumer.fetchers = 1: one
 *  fetcher thread for every partition, the MaxLag and MinFetchRate gauges over it, and the
 *  leader-finder thread that waits for partitions without a leader. */
public final class ConsumerFetcherManager {
    private final String consumerIdString;
    private final ConsumerConfig config;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition cond = lock.newCondition();
    private volatile ConsumerFetcherThread fetcher;
    private LeaderFinderThread leaderFinder;

    public ConsumerFetcherManager(String consumerIdString, ConsumerConfig config) {
        this.consumerIdString = consumerIdString;
        this.config = config;
        JmxReporter.gauge("kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId=" + config.clientId,
                () -> fetcher == null ? 0L : fetcher.maxLag());
        JmxReporter.gauge("kafka.consumer:type=ConsumerFetcherManager,name=MinFetchRate,clientId=" + config.clientId,
                () -> fetcher == null ? 0.0 : fetcher.requestRate());
    }

    /** The leader finder: with every partition's leader known it waits on its condition. */
    final class LeaderFinderThread extends ShutdownableThread {
        LeaderFinderThread() {
            super(consumerIdString + "-leader-finder-thread");
            setDaemon(true);
        }

        @Override
        public void doWork() throws InterruptedException {
            lock.lock();
            try {
                cond.await();
            } finally {
                lock.unlock();
            }
        }
    }

    public void startConnections(int brokerId, String brokerHost, int brokerPort,
                                 Map<TopicAndPartition, PartitionTopicInfo> partitions) throws InterruptedException {
        leaderFinder = new LeaderFinderThread();
        leaderFinder.start();
        ConsumerFetcherThread thread = new ConsumerFetcherThread(consumerIdString, 0, brokerId, brokerHost, brokerPort,
                config, partitions);
        Map<TopicAndPartition, Long> offsets = new java.util.LinkedHashMap<>();
        for (Map.Entry<TopicAndPartition, PartitionTopicInfo> e : partitions.entrySet())
            offsets.put(e.getKey(), e.getValue().getFetchOffset());
        thread.addPartitions(offsets);
        thread.start();
        fetcher = thread;
    }

    public void stopConnections() {
        if (fetcher != null) fetcher.shutdown();
        if (leaderFinder != null) leaderFinder.shutdown();
        fetcher = null;
    }
}
