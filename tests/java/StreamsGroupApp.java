// A small Kafka Streams application for groupctl's tests: a streams group (KIP-1071,
// group.protocol=streams) whose topology has a repartition and a changelog topic.
//
//   java -cp 'streams-libs/*:classes' StreamsGroupApp BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR ENDPOINT
//
// Topology: INPUT -> selectKey(value) -> groupByKey -> count (store "counts") -> OUTPUT.
// The key change makes subtopology 0 write to the repartition topic that subtopology 1
// reads, and the count's store has a changelog topic. Prints "STATE <new state>" on every
// state change and stops cleanly (leaving the group) when stdin closes or on SIGTERM.
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public final class StreamsGroupApp {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: StreamsGroupApp BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR ENDPOINT");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, args[5]);  // the user endpoint (host:port)

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
               .selectKey((key, value) -> value)
               .groupByKey()
               .count(Materialized.as("counts"))
               .toStream()
               .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            done.countDown();
        }));
        streams.setUncaughtExceptionHandler(error -> {
            error.printStackTrace();  // the harness shows stderr when the app fails
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        Thread stdinWatcher = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() != -1) {
                    // wait for EOF: the harness closes stdin to stop us
                }
            } catch (Exception ignored) {
                // stdin gone: stop as well
            }
            done.countDown();
        });
        stdinWatcher.setDaemon(true);
        stdinWatcher.start();
        done.await();
        streams.close();
        System.out.println("STATE CLOSED");
        System.out.flush();
    }
}
