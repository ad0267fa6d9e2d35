package kafka.consumer;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/** Kafka 0.8.2's PartitionTopicInfo. chunkQueue is the stream's queue, bounded by
 *  queued.max.message.chunks; enqueue() runs on the fetcher thread and blocks in put() when the
 *  stream's application thread stops iterating: the heart of the old consumer's stall. */
public final class PartitionTopicInfo {
    public final String topic;
    public final int partitionId;
    private final BlockingQueue<FetchedDataChunk> chunkQueue;
    final AtomicLong consumedOffset;
    final AtomicLong fetchedOffset;

    public PartitionTopicInfo(String topic, int partitionId, BlockingQueue<FetchedDataChunk> chunkQueue,
                              long startOffset) {
        this.topic = topic;
        this.partitionId = partitionId;
        this.chunkQueue = chunkQueue;
        this.consumedOffset = new AtomicLong(startOffset);
        this.fetchedOffset = new AtomicLong(startOffset);
    }

    public long getFetchOffset() {
        return fetchedOffset.get();
    }

    public long getConsumeOffset() {
        return consumedOffset.get();
    }

    public void resetConsumeOffset(long offset) {
        consumedOffset.set(offset);
    }

    /** Same order as 0.8.2: put the chunk, then advance fetchedOffset. */
    public void enqueue(List<Long> messageOffsets, int bytes) throws InterruptedException {
        if (messageOffsets.isEmpty()) return;
        long next = messageOffsets.get(messageOffsets.size() - 1) + 1;
        chunkQueue.put(new FetchedDataChunk(messageOffsets, bytes, this, fetchedOffset.get()));
        fetchedOffset.set(next);
    }
}
