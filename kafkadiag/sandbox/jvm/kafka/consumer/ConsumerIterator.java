package kafka.consumer;

import java.util.Collections;
import java.util.Iterator;
import java.util.concurrent.BlockingQueue;
import kafka.message.MessageAndMetadata;
import kafka.utils.IteratorTemplate;

/** Kafka 0.8.2's ConsumerIterator. makeNext() takes the next chunk from the stream's queue; with
 *  consumer.timeout.ms = -1 (the default) it waits forever, so a stream whose chunks the fetcher
 *  can no longer deliver parks here. */
public final class ConsumerIterator extends IteratorTemplate<MessageAndMetadata> {
    private final BlockingQueue<FetchedDataChunk> channel;
    private final ConsumerTopicStats stats;
    private Iterator<Long> current = Collections.emptyIterator();
    private PartitionTopicInfo currentTopicInfo;
    private long currentMessageBytes;

    public ConsumerIterator(BlockingQueue<FetchedDataChunk> channel, ConsumerTopicStats stats) {
        this.channel = channel;
        this.stats = stats;
    }

    @Override
    protected MessageAndMetadata makeNext() {
        if (!current.hasNext()) {
            FetchedDataChunk chunk;
            try {
                chunk = channel.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return allDone();
            }
            currentTopicInfo = chunk.topicInfo();
            current = chunk.messageOffsets().iterator();
            currentMessageBytes = chunk.bytes() / Math.max(1, chunk.messageOffsets().size());
        }
        long offset = current.next();
        currentTopicInfo.resetConsumeOffset(offset + 1);
        stats.record(currentTopicInfo.topic, currentMessageBytes);
        return new MessageAndMetadata(currentTopicInfo.topic, currentTopicInfo.partitionId, offset);
    }
}
