// Ground truth for groupctl's assignor ports: runs the Java client's own assignors.
//
//   java -cp '<kafka libs>/*' tests/java/AssignorHarness.java < cases.txt
//
// Input: whitespace-separated tokens, one statement per line. Strings are written as
// "x" + hex(UTF-8) ("x" alone is the empty string), "-" is null.
//   case <id> <assignor>                       start an assignment case
//   topic <topic> <partitions>
//   racks <topic> <partition> <rack>...        replica racks of one partition
//   member <id> <instance|-> <rack|-> <generation> <userdata|->   (userdata as x+hex bytes)
//   sub <topic>                                topic of the last member's subscription
//   own <topic> <partition>                    owned partition of the last member
//   userdata <id> <assignor> <generation>      start a user-data case
//   part <topic> <partition>                   a partition of that member's assignment
//   hashorder <id>                             start a HashMap<String,?> order case
//   key <string>                               put a key
//   tpset <id>                                 start a HashSet<TopicPartition> order case
//   add <topic> <partition> / del <topic> <partition>
//   run                                        finish the case and print its result
//   sync <token>                               print "synced <token>" and flush stdout
// Output per case: "result <id>", then "m <member> <topic> <partition>..." lines (sorted,
// duplicates kept: Java can assign a partition twice on inconsistent input), then
// "end"; or "error <id> <message>"; for user data "userdata <id> <x+hex|->"; for the
// order cases "order <id> <element>..." (TopicPartitions as topic/partition).
// Members are put into a HashMap in input order, as ConsumerCoordinator.onLeaderElected
// does with the JoinGroup response, and the assignor runs through
// ConsumerPartitionAssignor.assign(Cluster, GroupSubscription).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class AssignorHarness {

    static final class MemberSpec {
        String id, instance, rack;
        int generation;
        byte[] userData;
        List<String> topics = new ArrayList<>();
        List<TopicPartition> owned = new ArrayList<>();
    }

    static final class Case {
        String id, assignor, kind;
        int generation;
        Map<String, Integer> topics = new LinkedHashMap<>();
        Map<TopicPartition, List<String>> racks = new HashMap<>();
        List<MemberSpec> members = new ArrayList<>();
        List<TopicPartition> parts = new ArrayList<>();
        Map<String, Integer> keys = new HashMap<>();
        java.util.Set<TopicPartition> tps = new java.util.HashSet<>();
    }

    static String str(String token) {
        if (token.equals("-")) return null;
        return new String(bytes(token), StandardCharsets.UTF_8);
    }

    static byte[] bytes(String token) {
        if (token.equals("-")) return null;
        return HexFormat.of().parseHex(token.substring(1));
    }

    static String enc(String s) {
        return s == null ? "-" : "x" + HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    static Cluster cluster(Case c) {
        Map<String, Node> rackNodes = new TreeMap<>();
        Node plain = new Node(0, "broker0", 9092);
        for (List<String> racks : c.racks.values())
            for (String rack : racks)
                rackNodes.computeIfAbsent(rack, r -> new Node(rackNodes.size() + 1, "broker-" + r, 9092, r));
        List<Node> nodes = new ArrayList<>(rackNodes.values());
        nodes.add(plain);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (Map.Entry<String, Integer> topic : c.topics.entrySet()) {
            for (int p = 0; p < topic.getValue(); p++) {
                List<String> racks = c.racks.getOrDefault(new TopicPartition(topic.getKey(), p), List.of());
                Node[] replicas = racks.isEmpty() ? new Node[] {plain}
                    : racks.stream().sorted().map(rackNodes::get).toArray(Node[]::new);
                partitions.add(new PartitionInfo(topic.getKey(), p, replicas[0], replicas, replicas));
            }
        }
        return new Cluster("harness", nodes, partitions, Collections.emptySet(), Collections.emptySet());
    }

    static void runAssign(Case c, PrintWriter out) {
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (MemberSpec m : c.members) {
            Subscription s = new Subscription(m.topics, m.userData == null ? null : ByteBuffer.wrap(m.userData),
                m.owned, m.generation, m.rack == null || m.rack.isEmpty() ? Optional.empty() : Optional.of(m.rack));
            s.setGroupInstanceId(Optional.ofNullable(m.instance));
            subscriptions.put(m.id, s);
        }
        Map<String, Assignment> result;
        try {
            result = assignor(c.assignor).assign(cluster(c), new GroupSubscription(subscriptions)).groupAssignment();
        } catch (Throwable e) {
            out.println("error " + c.id + " " + enc(e.toString()));
            return;
        }
        out.println("result " + c.id);
        for (Map.Entry<String, Assignment> e : result.entrySet()) {
            Map<String, List<Integer>> byTopic = new TreeMap<>();
            for (TopicPartition tp : e.getValue().partitions())
                byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
            if (byTopic.isEmpty()) out.println("m " + enc(e.getKey()));
            for (Map.Entry<String, List<Integer>> t : byTopic.entrySet()) {
                StringBuilder line = new StringBuilder("m " + enc(e.getKey()) + " " + enc(t.getKey()));
                Collections.sort(t.getValue());
                for (int p : t.getValue()) line.append(' ').append(p);
                out.println(line);
            }
        }
        out.println("end");
    }

    @SuppressWarnings("removal")
    static void runUserData(Case c, PrintWriter out) {
        ConsumerPartitionAssignor a = assignor(c.assignor);
        a.onAssignment(new Assignment(c.parts), new ConsumerGroupMetadata("g", c.generation, "m", Optional.empty()));
        ByteBuffer data = a.subscriptionUserData(new java.util.HashSet<>());
        String hex = "-";
        if (data != null) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            hex = "x" + HexFormat.of().formatHex(b);
        }
        out.println("userdata " + c.id + " " + hex);
    }

    static void runOrder(Case c, PrintWriter out) {
        StringBuilder line = new StringBuilder("order " + c.id);
        if (c.kind.equals("hashorder"))
            for (String k : c.keys.keySet()) line.append(' ').append(enc(k));
        else
            for (TopicPartition tp : c.tps) line.append(' ').append(enc(tp.topic())).append('/').append(tp.partition());
        out.println(line);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.UTF_8);
        Case c = null;
        MemberSpec member = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] t = line.trim().split("\\s+");
            switch (t[0]) {
                case "":
                    break;
                case "case":
                    c = new Case();
                    c.kind = "assign";
                    c.id = t[1];
                    c.assignor = t[2];
                    break;
                case "userdata":
                    c = new Case();
                    c.kind = "userdata";
                    c.id = t[1];
                    c.assignor = t[2];
                    c.generation = Integer.parseInt(t[3]);
                    break;
                case "topic":
                    c.topics.put(str(t[1]), Integer.parseInt(t[2]));
                    break;
                case "racks":
                    List<String> racks = new ArrayList<>();
                    for (int i = 3; i < t.length; i++) racks.add(str(t[i]));
                    c.racks.put(new TopicPartition(str(t[1]), Integer.parseInt(t[2])), racks);
                    break;
                case "member":
                    member = new MemberSpec();
                    member.id = str(t[1]);
                    member.instance = str(t[2]);
                    member.rack = str(t[3]);
                    member.generation = Integer.parseInt(t[4]);
                    member.userData = bytes(t[5]);
                    c.members.add(member);
                    break;
                case "sub":
                    member.topics.add(str(t[1]));
                    break;
                case "own":
                    member.owned.add(new TopicPartition(str(t[1]), Integer.parseInt(t[2])));
                    break;
                case "hashorder":
                case "tpset":
                    c = new Case();
                    c.kind = t[0];
                    c.id = t[1];
                    break;
                case "key":
                    c.keys.put(str(t[1]), 0);
                    break;
                case "add":
                    c.tps.add(new TopicPartition(str(t[1]), Integer.parseInt(t[2])));
                    break;
                case "del":
                    c.tps.remove(new TopicPartition(str(t[1]), Integer.parseInt(t[2])));
                    break;
                case "part":
                    c.parts.add(new TopicPartition(str(t[1]), Integer.parseInt(t[2])));
                    break;
                case "sync":
                    out.println("synced " + t[1]);
                    out.flush();
                    break;
                case "run":
                    if (c.kind.equals("assign")) runAssign(c, out);
                    else if (c.kind.equals("userdata")) runUserData(c, out);
                    else runOrder(c, out);
                    c = null;
                    member = null;
                    break;
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        out.flush();
    }
}
