package com.example.orders;

import kafka.message.MessageAndMetadata;

/** The application's handler for one topic's records. */
public final class OrderHandler {
    private final WarehouseClient warehouse = new WarehouseClient();

    public void handle(MessageAndMetadata message) throws InterruptedException {
        warehouse.reserve(message.topic(), message.offset());
    }

    public WarehouseClient warehouse() {
        return warehouse;
    }
}
