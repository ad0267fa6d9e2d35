package com.example.orders;

/** A fast handler: books the record and returns. */
final class LedgerHandler implements RecordHandler {
    private long bookedBytes;

    @Override
    public void handle(byte[] value) {
        bookedBytes += value.length;
    }
}
