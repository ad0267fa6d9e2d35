package kafka.consumer;

import java.util.Map;
import kafka.api.FetchResponse;
import kafka.common.TopicAndPartition;
import kafka.server.AbstractFetcherThread;

/** Kafka 0.8.2's ConsumerFetcherThread, named ConsumerFetcherThread-consumerId-fetcherId-brokerId:
 *  it hands each partition's data to the stream's queue through PartitionTopicInfo.enqueue. */
public final class ConsumerFetcherThread extends AbstractFetcherThread {
    private final Map<TopicAndPartition, PartitionTopicInfo> partitionMap;

    public ConsumerFetcherThread(String consumerIdString, int fetcherId, int brokerId, String brokerHost,
                                 int brokerPort, ConsumerConfig config,
                                 Map<TopicAndPartition, PartitionTopicInfo> partitionMap) {
        super("ConsumerFetcherThread-" + consumerIdString + "-" + fetcherId + "-" + brokerId, config.clientId,
                brokerHost, brokerPort, config.socketTimeoutMs, config.fetchMessageMaxBytes, config.fetchWaitMaxMs,
                config.fetchMinBytes);
        this.partitionMap = partitionMap;
    }

    @Override
    public void processPartitionData(TopicAndPartition tp, long fetchOffset, FetchResponse.PartitionData data)
            throws InterruptedException {
        PartitionTopicInfo pti = partitionMap.get(tp);
        if (pti.getFetchOffset() != fetchOffset)
            throw new IllegalStateException("Offset doesn't match for partition " + tp);
        pti.enqueue(data.messageOffsets, data.bytes);
    }
}
