"""groupctl.lab: a local real Kafka cluster and real consumers, for `groupctl lab` and tests.

    dist       kafka_libs(), java_cmd(), consumer_group_command(): Kafka's jars (Maven Central,
               cached under ~/.cache/groupctl) and Kafka's own tools
    cluster    Lab.up() / Lab.load() / lab.status() / lab.down(): KRaft combined nodes
    consumer   LabConsumer, wait_balanced(): librdkafka consumers recording their callbacks
    workload   create_topic(), wait_topic(), TrickleProducer, run_workload()
    sasl       `lab up --sasl`: the SASL_PLAINTEXT listener, SCRAM/PLAIN users, client
               properties files
    config, process, ready: server.properties and log4j2, pids and ports, readiness
               (ApiVersions + Metadata through groupctl's own client)

Nothing is imported here, so `groupctl --help` stays fast.
"""
