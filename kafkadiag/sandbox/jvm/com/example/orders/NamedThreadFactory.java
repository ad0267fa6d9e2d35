package com.example.orders;

import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/** Names the pool's threads from a list, in the order the pool creates them. */
final class NamedThreadFactory implements ThreadFactory {
    private final Iterator<String> names;

    NamedThreadFactory(List<String> names) {
        this.names = names.iterator();
    }

    @Override
    public synchronized Thread newThread(Runnable task) {
        return new Thread(task, names.hasNext() ? names.next() : "order-worker-extra");
    }
}
