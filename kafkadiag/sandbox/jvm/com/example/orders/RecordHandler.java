package com.example.orders;

/** What the service does with one record of a topic. */
interface RecordHandler {
    void handle(byte[] value) throws Exception;
}
