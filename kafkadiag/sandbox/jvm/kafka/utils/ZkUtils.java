package kafka.utils;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/** The ZooKeeper paths and writes of Kafka 0.8.2's ZkUtils that the old consumer uses: ephemeral
 *  registration and ownership nodes, persistent offset nodes, parents created on demand. */
public final class ZkUtils implements AutoCloseable {
    public static final String CONSUMERS_PATH = "/consumers";
    public static final String BROKER_IDS_PATH = "/brokers/ids";
    public static final String BROKER_TOPICS_PATH = "/brokers/topics";

    private final ZooKeeper zk;

    public ZkUtils(String connect, int sessionTimeoutMs) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        zk = new ZooKeeper(connect, sessionTimeoutMs, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
        });
        if (!connected.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper session with " + connect);
    }

    public static String consumerIdsPath(String group) {
        return CONSUMERS_PATH + "/" + group + "/ids";
    }

    public static String ownersPath(String group, String topic) {
        return CONSUMERS_PATH + "/" + group + "/owners/" + topic;
    }

    public static String offsetsPath(String group, String topic) {
        return CONSUMERS_PATH + "/" + group + "/offsets/" + topic;
    }

    public void makeSurePersistentPathExists(String path) throws Exception {
        if (path.isEmpty() || path.equals("/")) return;
        if (zk.exists(path, false) != null) return;
        makeSurePersistentPathExists(path.substring(0, path.lastIndexOf('/')));
        try {
            zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // created meanwhile
        }
    }

    public void createEphemeralPath(String path, String data) throws Exception {
        makeSurePersistentPathExists(path.substring(0, path.lastIndexOf('/')));
        zk.create(path, bytes(data), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
    }

    public void updatePersistentPath(String path, String data) throws Exception {
        try {
            zk.setData(path, bytes(data), -1);
        } catch (KeeperException.NoNodeException e) {
            makeSurePersistentPathExists(path.substring(0, path.lastIndexOf('/')));
            zk.create(path, bytes(data), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
    }

    public String readDataMaybeNull(String path) throws Exception {
        try {
            return new String(zk.getData(path, false, null), StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    public List<String> getChildren(String path) throws Exception {
        return zk.getChildren(path, false);
    }

    private static byte[] bytes(String data) {
        return data.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws InterruptedException {
        zk.close();
    }
}
