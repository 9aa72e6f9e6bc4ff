"""A librdkafka JoinGroup answer names no group: it takes the group from the same client
instance's latest line that did, whatever that line's facility. Found by the suite under
load: a member whose first JoinGroup was answered MEMBER_ID_REQUIRED had only CGRPCOORD /
JOIN lines naming its group before its generation-4 answer, so that join lost its group."""
from pyspark.sql import functions as F

from groupctl.analytics import extract

G = "an-classic-analyze-lab-lab0-9568"
M = "rdkafka-debug-4db7310f-27df-496d-a085-9e287aa52a36"
LINES = [  # lines of that run's client log, in order (most left out)
    f'%7|1795527008.427|CGRPSTATE|rdkafka-debug#consumer-1| [thrd:main]: Group "{G}" changed '
    "state init -> query-coord (join-state init)",
    f'%7|1795527008.434|JOIN|rdkafka-debug#consumer-1| [thrd:main]: 127.0.0.1:29220/1: Joining '
    f'group "{G}" with 1 subscribed topic(s) and member id ""',
    "%7|1795527008.435|JOINGROUP|rdkafka-debug#consumer-1| [thrd:main]: JoinGroup response: "
    f"GenerationId -1, Protocol , LeaderId , my MemberId {M}, member metadata count 0: Broker: "
    "Group member needs a valid member ID",
    f'%7|1795527008.484|CGRPCOORD|rdkafka-debug#consumer-1| [thrd:main]: 127.0.0.1:29220/1: Group '
    f'"{G}" coordinator is 127.0.0.1:29220 id 1',
    "%7|1795527011.203|JOINGROUP|rdkafka-debug#consumer-1| [thrd:main]: JoinGroup response: "
    f"GenerationId 4, Protocol range, LeaderId analyze-first-814cad2f, my MemberId {M}, member "
    "metadata count 0: (no error)",
    # another client in the same file, whose group is never named: it gets none
    "%7|1795527012.000|JOINGROUP|other#consumer-2| [thrd:main]: JoinGroup response: "
    "GenerationId 7, Protocol range, LeaderId x, my MemberId other-1, member metadata count 0: "
    "(no error)",
]


def test_a_join_answer_takes_its_group_from_any_line_naming_it(spark, tmp_path):
    log = tmp_path / "rdkafka.log"
    log.write_text("\n".join(LINES) + "\n")
    events = extract.rdkafka_client_events(extract.read_lines(spark, [str(log)]))
    joined = events.filter(F.col("kind") == "joined").select("client", "generation", "group", "member")
    assert sorted(tuple(r) for r in joined.collect()) == [
        ("other", 7, None, "other-1"), ("rdkafka-debug", 4, G, M)]


def test_the_clients_figure_reads_the_same_group_context(spark, tmp_path):
    """analytics/handover.py reads the same lines for its own rows: the same rule
    (extract.rdkafka_group_context), so its generation-4 join has the group too."""
    from groupctl.analytics import handover

    log = tmp_path / "rdkafka.log"
    log.write_text("\n".join(LINES) + "\n")
    rows = handover.rdkafka_lines(extract.read_lines(spark, [str(log)]))
    joined = rows.filter(F.col("kind") == "joined").select("client", "gen", "group")
    assert sorted(tuple(r) for r in joined.collect()) == [
        ("other", 7, None), ("rdkafka-debug", 4, G)]
