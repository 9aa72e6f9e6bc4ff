"""The `groupctl analyze` pipeline on PySpark: extract (one reader per source, built-in
Spark functions only) -> pure transforms (episodes, storms, flapping, metrics) -> load
(Parquet, CSV, report.html). Imports nothing from groupctl.cli; pyspark is imported only
when a module here is, and only `groupctl analyze` imports them.

    patterns.py   the log lines read, as regexes (shared with bench/analyze.py)
    schema.py     the event schema and every output table's columns (the contracts)
    extract.py    broker logs, client logs, event records -> events
    episodes.py   events -> the broker log's rounds;  observed.py every witness's, each
                  round once with its best figures
    transforms.py episodes -> storms, flapping, member outcomes, moves, hourly, metrics
    pipeline.py   inputs -> tables (the job)
    load.py       tables -> Parquet + CSV + rows;  report.py rows -> report.html
    session.py    the SparkSession (quiet log, progress, master check, Ctrl-C)
    jvm_stderr.py the driver JVM's stderr without its launch noise
    jvm_archive.py the driver JVM's class-data archive;  scratch.py its files' directory
    standalone.py a local Spark standalone cluster for tests and the benchmark
"""
