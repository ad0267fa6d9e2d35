package kafka.consumer;

import java.util.Iterator;
import java.util.concurrent.BlockingQueue;
import kafka.message.MessageAndMetadata;

/** One stream of a topic: the application iterates it on a thread of its own. */
public final class KafkaStream implements Iterable<MessageAndMetadata> {
    public final String topic;
    public final int threadId;
    public final BlockingQueue<FetchedDataChunk> queue;
    private final ConsumerIterator iterator;

    public KafkaStream(String topic, int threadId, BlockingQueue<FetchedDataChunk> queue, ConsumerTopicStats stats) {
        this.topic = topic;
        this.threadId = threadId;
        this.queue = queue;
        this.iterator = new ConsumerIterator(queue, stats);
    }

    @Override
    public Iterator<MessageAndMetadata> iterator() {
        return iterator;
    }
}
