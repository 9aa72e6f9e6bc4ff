"""Kafka's own command-line tools, run from the lab's jars (dist.py resolves them): the
class of a tool in the release at hand (3.7's ConsumerGroupCommand is still kafka.admin's,
3.x's DumpLogSegments kafka.tools'), StorageTool's format of a new lab's nodes, and the
group commands the tests take as ground truth; each JVM with a class-data archive
(groupctl/jvm_cds.py) for a faster start.
"""
from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import time
from pathlib import Path

from .. import jvm_cds
from ..errors import LabError
from ..safe_files import write_atomic
from . import dist

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
SHARE_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STREAMS_GROUP_COMMAND = "org.apache.kafka.tools.streams.StreamsGroupCommand"
# A tool's class in each release that has it, newest first (3.7's ConsumerGroupCommand
# is still the Scala one; DumpLogSegments moved to the tools module in 4.0).
TOOL_CLASSES: dict[str, tuple[str, ...]] = {
    "ConsumerGroupCommand": (CONSUMER_GROUP_COMMAND, "kafka.admin.ConsumerGroupCommand"),
    "ShareGroupCommand": (SHARE_GROUP_COMMAND,),
    "StreamsGroupCommand": (STREAMS_GROUP_COMMAND,),
    "DumpLogSegments": ("org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments"),
}


@functools.lru_cache(maxsize=None)
def tool_class(libs: Path, tool: str) -> str:
    """The main class of Kafka's `tool` (a key of TOOL_CLASSES) in the jars of `libs`;
    LabError naming the version when that release has none."""
    import zipfile

    names: set[str] = set()
    for jar in Path(libs).iterdir():
        if dist.BROKER_JAR_RE.match(jar.name) or jar.name.startswith("kafka-tools-"):
            with contextlib.suppress(OSError, zipfile.BadZipFile), zipfile.ZipFile(jar) as z:
                names.update(z.namelist())
    for cls in TOOL_CLASSES[tool]:
        if cls.replace(".", "/") + ".class" in names:
            return cls
    raise LabError(f"Kafka {dist.libs_version(Path(libs)) or '?'} ({libs}) has no {tool}")


def classpath(libs: Path) -> str:
    return str(Path(libs) / "*")


def java_tool(libs: Path, main_class: str, *args: str, timeout: float = 60,
              jvm_opts: tuple[str, ...] = (), cds: str | None = "tool",
              ) -> subprocess.CompletedProcess:
    """Run one of Kafka's command-line classes from `libs` and capture its output.
    `cds`: name of the class-data-sharing archive to use (or create) for faster start-up."""
    cds_flags, dump = cds_options(libs, cds) if cds else ([], None)
    cmd = [dist.java_cmd(), *TOOL_JVM_OPTS, *cds_flags, *jvm_opts, "-cp", classpath(libs),
           main_class, *args]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        jvm_cds.commit(dump, False)
        raise LabError(f"{main_class.rsplit('.', 1)[-1]} did not finish in {timeout:.0f}s"
                       f"{dist.output_tail(exc.stderr)}") from None
    jvm_cds.commit(dump, proc.returncode == 0)
    return proc


# Short-lived tools: quick start beats peak speed; keep their stdout free of JVM warnings
# and log noise.
TOOL_JVM_OPTS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                 "-XX:-UsePerfData", "-Xlog:disable", "-Xlog:all=warning:stderr",
                 "-Djava.awt.headless=true", "-Dlog4j2.level=WARN")


# --- class-data sharing (groupctl/jvm_cds.py): about 0.6 s less per broker, 0.3 s per tool

def cds_options(libs: Path, kind: str) -> tuple[list[str], Path | None]:
    """JVM flags to use (or to create) the `kind` archive for `libs`, and the temp file
    a creating run dumps to (hand it to jvm_cds.commit after the JVM exits)."""
    if os.environ.get("GROUPCTL_LAB_NO_CDS"):
        return [], None
    java = dist.java_cmd()
    try:
        return jvm_cds.options(kind, [os.path.realpath(java), dist.java_version(java),
                                      str(Path(libs).resolve()), *jvm_cds.jar_stamps(libs)])
    except OSError:
        return [], None



def format_storage(libs: Path, cluster_id: str, nodes: list[tuple[int, Path]],
                   quorum_args: list[str], timeout: float = 60) -> None:
    """kafka.tools.StorageTool format for each (node id, server.properties), in parallel;
    `quorum_args`: ["--standalone"] or ["--initial-controllers", "1@host:port:dirid,..."]."""
    cds_flags, dump = cds_options(libs, "format")
    procs, argfiles = [], []
    try:
        for i, (node_id, config_file) in enumerate(nodes):
            flags = cds_flags if (i == 0 or dump is None) else []  # one JVM dumps the archive
            # The tool's arguments (--add-scram carries passwords) go in a 0600 argument
            # file the java launcher reads (@file), never on a command line `ps` shows.
            argfile = Path(config_file).with_name("format.args")
            write_atomic(argfile, java_argfile(["kafka.tools.StorageTool", "format",
                                                "--cluster-id", cluster_id,
                                                "--config", str(config_file), *quorum_args]))
            argfiles.append(argfile)
            cmd = [dist.java_cmd(), *TOOL_JVM_OPTS, *flags, "-cp", classpath(libs), f"@{argfile}"]
            procs.append((node_id, subprocess.Popen(cmd, stdin=subprocess.DEVNULL, text=True,
                                                    stdout=subprocess.PIPE,
                                                    stderr=subprocess.STDOUT)))
        _wait_formatted(procs, dump, timeout)
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for argfile in argfiles:
            argfile.unlink(missing_ok=True)


def java_argfile(args: list[str]) -> str:
    """A java launcher argument file (@file) holding `args`: each quoted, with the
    launcher's escapes for backslash and quote."""
    def quoted(arg: str) -> str:
        return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "\n".join(quoted(a) for a in args) + "\n"


def _wait_formatted(procs: list, dump, timeout: float) -> None:
    errors = []
    deadline = time.monotonic() + timeout
    for node_id, p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            errors.append(f"node {node_id}: StorageTool format timed out after {timeout:g}s")
            continue
        if p.returncode != 0:
            errors.append(f"node {node_id}: StorageTool format failed "
                          f"(exit {p.returncode}){dist.output_tail(out, 8)}")
    jvm_cds.commit(dump, not errors)
    if errors:
        raise LabError("; ".join(errors))


def consumer_group_command(bootstrap: str, *args: str, timeout: float = 60,
                           libs: Path | None = None) -> subprocess.CompletedProcess:
    """Kafka's own ``kafka-consumer-groups.sh`` (ConsumerGroupCommand) against `bootstrap`,
    e.g. ``consumer_group_command(b, "--describe", "--group", "g")``; ground truth in tests.
    Returns the CompletedProcess (stdout/stderr as text); does not raise on a non-zero exit."""
    libs = libs or dist.kafka_libs()
    return java_tool(libs, tool_class(libs, "ConsumerGroupCommand"),
                     "--bootstrap-server", bootstrap, *args, timeout=timeout)


def share_group_command(bootstrap: str, *args: str, timeout: float = 60,
                        libs: Path | None = None) -> subprocess.CompletedProcess:
    """Kafka's ``kafka-share-groups.sh`` (ShareGroupCommand), as consumer_group_command."""
    libs = libs or dist.kafka_libs()
    return java_tool(libs, tool_class(libs, "ShareGroupCommand"),
                     "--bootstrap-server", bootstrap, *args, timeout=timeout)


def streams_group_command(bootstrap: str, *args: str, timeout: float = 60,
                          libs: Path | None = None) -> subprocess.CompletedProcess:
    """Kafka's ``kafka-streams-groups.sh`` (StreamsGroupCommand), as consumer_group_command."""
    libs = libs or dist.kafka_libs()
    return java_tool(libs, tool_class(libs, "StreamsGroupCommand"),
                     "--bootstrap-server", bootstrap, *args, timeout=timeout)
