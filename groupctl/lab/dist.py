"""Apache Kafka's jars for the lab: resolved once from Maven Central, or an existing install.

    kafka_libs()                    ~/.cache/groupctl/kafka/4.4.0/libs (resolved on first use)
    kafka_libs("3.7.2")             ~/.cache/groupctl/kafka/3.7.2/libs
    kafka_libs(kafka_home="/opt/kafka")   /opt/kafka/libs

The cache root is ``$GROUPCTL_CACHE`` or ``~/.cache/groupctl``. Resolution writes a
generated pom (the broker ``kafka_2.13``, ``kafka-tools`` for ConsumerGroupCommand, and the
Log4j 2 binding the distribution ships but the published poms leave out), lets Maven copy
the dependencies into a temporary directory and renames it into place, under a file lock,
so concurrent sessions neither race nor see a half-filled directory.

Why the explicit logging jars: the published kafka poms depend on slf4j-api 1.7.36 and
log4j-core without any SLF4J binding, so a broker run from them logs nothing. The binary
distribution of 4.x ships slf4j-api 2.0.x with log4j-slf4j2-impl; we pin the same. 3.x
distributions ship Log4j 1 (reload4j) with slf4j-reload4j and read log4j.properties: so do we.

The lab runs Kafka 3.7 and later (KRaft combined nodes); running the jars' own tools
(StorageTool, ConsumerGroupCommand, ...) is tools.py.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .. import jvm_cds
from ..errors import LabError, UsageError
from ..jvm_cds import cache_root
from ..safe_files import UnsafePath, private_dir

DEFAULT_KAFKA_VERSION = "4.4.0"
OLDEST_KAFKA_VERSION = (3, 7)
SLF4J_VERSION = "2.0.17"
LOG4J_VERSION = "2.25.4"
# What Kafka 3.x distributions ship for logging (Log4j 1, through reload4j).
SLF4J1_VERSION = "1.7.36"
RELOAD4J_VERSION = "1.2.25"
MAVEN_TIMEOUT = 1200.0  # a fresh ~/.m2 on a slow network
LOCK_TIMEOUT = 1500.0   # another session may be resolving the same version

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:[-.][A-Za-z0-9.]+)?$")
BROKER_JAR_RE = re.compile(r"^kafka_2\.1[23]-(\d+\.\d+\.\d+[^/]*?)\.jar$")


def _check_version(version: str) -> tuple[int, int, int]:
    m = _VERSION_RE.match(version)
    if not m:
        raise LabError(f"--kafka-version must look like 4.4.0, not {version!r}")
    parts = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if parts[:2] < OLDEST_KAFKA_VERSION:
        oldest = ".".join(map(str, OLDEST_KAFKA_VERSION))
        raise LabError(f"the lab runs Apache Kafka {oldest} or later (KRaft); "
                       f"{version} is too old")
    return parts


def version_tuple(version: str | None) -> tuple[int, int, int]:
    """(major, minor, patch) of a Kafka version string ("4.4.0", "3.9.2-rc1"); an unknown
    version (None) is the default's."""
    m = _VERSION_RE.match(version or DEFAULT_KAFKA_VERSION)
    if not m:
        raise LabError(f"not a Kafka version: {version!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def log4j1(version: str | None) -> bool:
    """Kafka 3.x logs through Log4j 1 (reload4j) and reads log4j.properties."""
    return version_tuple(version)[0] < 4


@functools.lru_cache(maxsize=None)
def java_cmd() -> str:
    """The java executable ($JAVA_HOME/bin/java, else java on PATH), checked to be 17+."""
    java = jvm_cds.java_path()
    if not java:
        raise LabError("java not found: the lab needs Java 17+ on PATH (or JAVA_HOME)")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"cannot run {java} -version: {exc}") from None
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if out.returncode != 0 or not m:
        raise LabError(f"{java} -version failed: {text.strip()[-300:]}")
    major = int(m.group(1))
    if major == 1:  # "1.8.0_..." style
        major = int(m.group(2) or 0)
    if major < 17:
        raise LabError(f"the lab needs Java 17+, but {java} is Java {major}")
    _JAVA_VERSION[java] = text.strip()
    return java


_JAVA_VERSION: dict[str, str] = {}


def mvn_cmd() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise LabError("mvn not found: the lab fetches Kafka's jars from Maven Central with "
                       "Maven (install it, or point --kafka-home at a Kafka install)")
    return mvn


def home_libs(kafka_home: str | os.PathLike) -> Path:
    libs = Path(kafka_home).expanduser().resolve() / "libs"
    if not libs.is_dir() or not any(BROKER_JAR_RE.match(p.name) for p in libs.iterdir()):
        raise LabError(f"{kafka_home} is not a Kafka installation (no libs/kafka_2.13-*.jar)")
    return libs


def libs_version(libs: Path) -> str | None:
    """The Kafka version of a libs directory, from its broker jar's name."""
    for p in sorted(libs.iterdir()):
        m = BROKER_JAR_RE.match(p.name)
        if m:
            return m.group(1)
    return None


def kafka_libs(version: str | None = None, kafka_home: str | None = None) -> Path:
    """The directory of Kafka's jars (use it as ``-cp 'libs/*'``), resolving it once."""
    if kafka_home:
        libs = home_libs(kafka_home)
        found = libs_version(libs) or "0"
        m = _VERSION_RE.match(found)
        if not m or (int(m.group(1)), int(m.group(2))) < OLDEST_KAFKA_VERSION:
            oldest = ".".join(map(str, OLDEST_KAFKA_VERSION))
            raise LabError(f"{kafka_home} holds Kafka {found}; the lab needs Kafka {oldest} "
                           "or later")
        return libs
    version = version or DEFAULT_KAFKA_VERSION
    _check_version(version)
    vdir = cache_root() / "kafka" / version
    libs = vdir / "libs"
    if _complete(libs, version):
        return libs
    try:
        private_dir(vdir)
    except UnsafePath as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cache directory {vdir}: cannot create it ({exc.strerror or exc}); "
                         "set GROUPCTL_CACHE to a writable directory") from None
    with _file_lock(vdir.parent / f".{version}.lock", LOCK_TIMEOUT,
                    f"Kafka {version} jars are being resolved by another process"):
        if _complete(libs, version):  # someone else finished while we waited
            return libs
        if libs.exists():  # a broken leftover (no broker jar): replace it
            shutil.rmtree(libs, ignore_errors=True)
        _resolve(version, vdir, libs)
    return libs


def _complete(libs: Path, version: str) -> bool:
    return (libs / f"kafka_2.13-{version}.jar").is_file()


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float, waiting_for: str):
    """An exclusive flock on `path`: the kernel drops it when the process dies, so it can
    never go stale. Polls with a deadline instead of blocking forever."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LabError(f"timed out after {timeout:.0f}s: {waiting_for} "
                                   f"(lock {path})") from None
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)  # releases the lock


def pom_xml(version: str) -> str:
    dep = ("    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
           "<version>{v}</version>{x}</dependency>")
    no_connect = ("<exclusions><exclusion><groupId>org.apache.kafka</groupId>"
                  "<artifactId>connect-runtime</artifactId></exclusion></exclusions>")
    deps = [
        dep.format(g="org.apache.kafka", a="kafka_2.13", v=version, x=""),
        # ConsumerGroupCommand; Connect (jetty, jersey) is not needed for it.
        dep.format(g="org.apache.kafka", a="kafka-tools", v=version, x=no_connect),
    ]
    if log4j1(version):
        deps += [
            dep.format(g="org.slf4j", a="slf4j-api", v=SLF4J1_VERSION, x=""),
            dep.format(g="org.slf4j", a="slf4j-reload4j", v=SLF4J1_VERSION, x=""),
            dep.format(g="ch.qos.reload4j", a="reload4j", v=RELOAD4J_VERSION, x=""),
        ]
    else:
        deps += [
            dep.format(g="org.slf4j", a="slf4j-api", v=SLF4J_VERSION, x=""),
            dep.format(g="org.apache.logging.log4j", a="log4j-api", v=LOG4J_VERSION, x=""),
            dep.format(g="org.apache.logging.log4j", a="log4j-core", v=LOG4J_VERSION, x=""),
            dep.format(g="org.apache.logging.log4j", a="log4j-slf4j2-impl", v=LOG4J_VERSION,
                       x=""),
        ]
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            "  <groupId>groupctl</groupId><artifactId>kafka-lab-libs</artifactId>"
            f"<version>{version}</version><packaging>pom</packaging>\n"
            "  <dependencies>\n" + "\n".join(deps) + "\n  </dependencies>\n</project>\n")


def _resolve(version: str, vdir: Path, libs: Path, pom: str | None = None,
             complete=_complete) -> None:
    java_cmd()  # Maven needs it too; a clear message beats Maven's
    mvn = mvn_cmd()
    work = Path(tempfile.mkdtemp(prefix=".resolve-", dir=vdir))
    try:
        (work / "pom.xml").write_text(pom or pom_xml(version))
        out_dir = work / "libs"
        cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(work / "pom.xml"),
               "dependency:copy-dependencies", f"-DoutputDirectory={out_dir}"]
        try:
            proc = subprocess.run(cmd, cwd=work, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=MAVEN_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise LabError(f"Maven did not finish resolving Kafka {version} in "
                           f"{MAVEN_TIMEOUT:.0f}s{output_tail(exc.output)}") from None
        except OSError as exc:
            raise LabError(f"cannot run {mvn}: {exc}") from None
        if proc.returncode != 0 or not complete(out_dir, version):
            raise LabError(f"Maven could not resolve Kafka {version} from Maven Central "
                           f"(exit {proc.returncode}){output_tail(proc.stdout)}")
        os.rename(out_dir, libs)  # atomic: the directory appears complete or not at all
    finally:
        shutil.rmtree(work, ignore_errors=True)


def streams_libs(version: str | None = None) -> Path:
    """The jars of a Kafka Streams application (``org.apache.kafka:kafka-streams`` and its
    dependencies: kafka-clients, rocksdbjni, ...), resolved once from Maven Central into
    ~/.cache/groupctl/kafka-streams/VERSION/libs like the broker's. For the test harness's
    streams-group application (tests/java/StreamsGroupApp.java)."""
    version = version or DEFAULT_KAFKA_VERSION
    _check_version(version)
    vdir = cache_root() / "kafka-streams" / version
    libs = vdir / "libs"

    def complete(path: Path, v: str) -> bool:
        return (path / f"kafka-streams-{v}.jar").is_file()

    if complete(libs, version):
        return libs
    try:
        private_dir(vdir)
    except UnsafePath as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cache directory {vdir}: cannot create it ({exc.strerror or exc}); "
                         "set GROUPCTL_CACHE to a writable directory") from None
    with _file_lock(vdir.parent / f".{version}.lock", LOCK_TIMEOUT,
                    f"Kafka Streams {version} jars are being resolved by another process"):
        if complete(libs, version):
            return libs
        if libs.exists():
            shutil.rmtree(libs, ignore_errors=True)
        pom = ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
               "  <modelVersion>4.0.0</modelVersion>\n"
               "  <groupId>groupctl</groupId><artifactId>kafka-streams-libs</artifactId>"
               f"<version>{version}</version><packaging>pom</packaging>\n"
               "  <dependencies><dependency><groupId>org.apache.kafka</groupId>"
               f"<artifactId>kafka-streams</artifactId><version>{version}</version>"
               "</dependency></dependencies>\n</project>\n")
        _resolve(version, vdir, libs, pom, complete)
    return libs


def output_tail(output, lines: int = 15) -> str:
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    text = [ln for ln in (output or "").splitlines() if ln.strip()]
    return (":\n  " + "\n  ".join(text[-lines:])) if text else ""


def java_version(java: str) -> str:
    """`java -version`'s text for `java` once java_cmd() has checked it (else "")."""
    return _JAVA_VERSION.get(java, "")
