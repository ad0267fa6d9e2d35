/**
 * Threads whose names hold line breaks, quotes and brackets, as Thread.setName takes them: jstack
 * prints each name as it is, so a header runs over two or three lines. "holder" keeps a monitor
 * that "waiter" is BLOCKED on. Prints READY once both are there, then waits to be dumped.
 */
public final class NamesWithLineBreaks {
    public static void main(String[] args) throws Exception {
        Object lock = new Object();
        Thread holder = new Thread(() -> {
            synchronized (lock) {
                sleep();
            }
        }, "holder\nsecond line \"quoted\" [x]");
        holder.setDaemon(true);
        holder.start();
        while (holder.getState() != Thread.State.TIMED_WAITING) Thread.sleep(10);
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                System.out.println("unreachable while holder sleeps");
            }
        }, "waiter \"q\"\n\nafter a blank line");
        waiter.setDaemon(true);
        waiter.start();
        while (waiter.getState() != Thread.State.BLOCKED) Thread.sleep(10);
        System.out.println("READY");
        sleep();
    }

    static void sleep() {
        try {
            Thread.sleep(600_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
