"""Every environment variable groupctl reads, with what it does: the one table the man
page's ENVIRONMENT section and the docs site's table are generated from (groupctl.cli.docs).
tests/unit/test_environment_documented.py fails when the code reads a GROUPCTL_* variable
that is not here (or this names one nothing reads). Variables starting with `_GROUPCTL_`
are internal (shell completion, test hooks) and not documented."""
from __future__ import annotations

# (name, meaning in Markdown: `code` spans; the man page drops the backticks)
ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("GROUPCTL_BOOTSTRAP_SERVERS", "brokers when no `-b/--bootstrap-server` or `--context` is "
                                   "given (before the current context)"),
    ("GROUPCTL_CONFIG", "the contexts file (default `~/.config/groupctl/config.yaml`)"),
    ("GROUPCTL_CACHE", "cache root: Kafka's jars (`kafka/<version>/libs`) and the JVMs' "
                       "class-data archives (`cds/`) (default `~/.cache/groupctl`)"),
    ("GROUPCTL_LAB_HOME", "where labs keep their state, data and logs, one directory per "
                          "`--name` (default `$GROUPCTL_CACHE/lab`)"),
    ("GROUPCTL_LAB_JAVA_OPTS", "extra JVM options for the lab's brokers (split on spaces)"),
    ("GROUPCTL_LAB_NO_CDS", "when set, the lab's JVMs neither use nor create class-data "
                            "sharing archives (slower start)"),
    ("GROUPCTL_SPARK_NO_CDS", "when set, `analyze`'s Spark driver neither uses nor creates "
                              "its class-data sharing archive (`$GROUPCTL_CACHE/cds`; a "
                              "short run starts slower)"),
    ("GROUPCTL_SPARK_MASTER", "default for `analyze --master` (default `local[*]`)"),
    ("JAVA_HOME", "the Java 17+ the lab runs (`$JAVA_HOME/bin/java`, else `java` on PATH)"),
    ("NO_COLOR", "no colour, as `--no-color`"),
)
