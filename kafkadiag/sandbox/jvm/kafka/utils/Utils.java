package kafka.utils;

import java.util.concurrent.locks.Lock;

/** Kafka 0.8.2's Utils.inLock: the helper every fetcher critical section goes through, so the
 *  lock's owner shows Utils.inLock in its stack. */
public final class Utils {
    public interface LockedBlock<T> {
        T run() throws InterruptedException;
    }

    private Utils() {}

    public static <T> T inLock(Lock lock, LockedBlock<T> block) throws InterruptedException {
        lock.lock();
        try {
            return block.run();
        } finally {
            lock.unlock();
        }
    }
}
