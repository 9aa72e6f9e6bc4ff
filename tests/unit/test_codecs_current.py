"""The generated codecs are current: tools/gen_codecs.py, run against the newest Kafka jar in
the cache, writes exactly the committed message modules (specs, encoders and decoders of
every version), consumer-protocol codecs and record decoders. Skipped only when no
kafka-clients jar is cached at all (the suite's lab puts one there).

And the generated encoders against an independent one: the closures of tests/spec_encoder.py,
built from the same specs as data, write the same bytes for every API, version and direction
(so the generator's encoders are not only checked against its own decoders)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupctl.jvm_cds import cache_root
from groupctl.protocol.messages import APIS
from groupctl.protocol.types import Writer
from tests.spec_encoder import compile_encoder
from tests.unit.test_protocol_roundtrip import CASE_IDS, CASES, Sample, encode, struct_of

ROOT = Path(__file__).resolve().parents[2]


def test_generated_codecs_match_the_newest_jar():
    if not list((cache_root() / "kafka").glob("*/libs/kafka-clients-[0-9]*.jar")):
        pytest.skip(f"no kafka-clients jar under {cache_root() / 'kafka'}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    made = subprocess.run([sys.executable, "tools/gen_codecs.py", "--check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stdout + made.stderr


def test_generator_names_the_regeneration_command(tmp_path, capsys):
    """A stale module fails the check with the command that fixes it."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_codecs
    finally:
        sys.path.remove(str(ROOT / "tools"))
    if not list((cache_root() / "kafka").glob("*/libs/kafka-clients-[0-9]*.jar")):
        pytest.skip("no kafka-clients jar cached")
    stale = tmp_path / "m12_heartbeat.py"
    stale.write_text("# edited by hand\n")
    real = gen_codecs.generated_files

    def with_a_stale_copy():
        files = real()
        text = files.pop(gen_codecs.PROTOCOL / "messages" / "m12_heartbeat.py")
        files[stale] = text
        return files

    gen_codecs.generated_files = with_a_stale_copy
    gen_codecs.ROOT = tmp_path.parent
    try:
        assert gen_codecs.main(["--check"]) == 1
    finally:
        gen_codecs.generated_files = real
        gen_codecs.ROOT = ROOT
    assert stale.read_text() == "# edited by hand\n"   # --check never writes
    out, err = capsys.readouterr()
    assert out == f"stale: {tmp_path.name}/m12_heartbeat.py\n"
    assert "regenerate with `PYTHONPATH=. python tools/gen_codecs.py`" in err


@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_generated_encoders_write_what_an_independent_encoder_writes(api, version, direction):
    struct = struct_of(api, direction)
    body = Sample().struct(struct, version)
    w = Writer()
    compile_encoder(struct, version, api.flexible(version))(w, body)
    assert encode(api, version, direction, body) == w.getvalue()
    nulls = Sample(nulls=True).struct(struct, version)
    w = Writer()
    compile_encoder(struct, version, api.flexible(version))(w, nulls)
    assert encode(api, version, direction, nulls) == w.getvalue()


def test_every_api_is_generated():
    assert all(api._codecs.keys() == set(range(api.min_version, api.max_version + 1))
               for api in APIS.values())
