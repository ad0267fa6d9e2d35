package com.example.orders;

import kafka.consumer.KafkaStream;
import kafka.message.MessageAndMetadata;

/** Iterates one stream on a pool thread and hands every record to the topic's handler. */
public final class StreamWorker implements Runnable {
    private final KafkaStream stream;
    private final OrderHandler handler;

    public StreamWorker(KafkaStream stream, OrderHandler handler) {
        this.stream = stream;
        this.handler = handler;
    }

    @Override
    public void run() {
        try {
            for (MessageAndMetadata message : stream) handler.handle(message);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
