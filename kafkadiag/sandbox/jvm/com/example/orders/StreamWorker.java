package com.example.orders;

import kafka.consumer.ConsumerIterator;
import kafka.consumer.KafkaStream;
import kafka.message.MessageAndMetadata;

/** Iterates one stream for ever, as the old consumer's documentation shows it. */
final class StreamWorker implements Runnable {
    private final KafkaStream<byte[], byte[]> stream;
    private final RecordHandler handler;
    private final Progress progress;

    StreamWorker(KafkaStream<byte[], byte[]> stream, RecordHandler handler, Progress progress) {
        this.stream = stream;
        this.handler = handler;
        this.progress = progress;
    }

    @Override
    public void run() {
        ConsumerIterator<byte[], byte[]> records = stream.iterator();
        try {
            while (records.hasNext()) {
                MessageAndMetadata<byte[], byte[]> record = records.next();
                handler.handle(record.message());
                progress.handled(record.topic(), record.partition(), record.offset());
            }
        } catch (Exception e) {
            System.err.println("worker " + Thread.currentThread().getName() + " died: " + e);
        }
    }
}
