package com.example.orders;

import java.util.concurrent.TimeUnit;

/** The downstream service the order handlers call. While "hung" a call does not return: the
 *  caller sleeps, as a thread blocked on a remote call without a timeout would wait. */
public final class WarehouseClient {
    private volatile boolean hung;

    public void setHung(boolean value) {
        hung = value;
    }

    public void reserve(String topic, long offset) throws InterruptedException {
        while (hung) TimeUnit.MILLISECONDS.sleep(500);
    }
}
