"""Generate groupctl/protocol/records/schemas.py from the JSON specs of the coordinator's
records (common/message/*Key.json, *Value.json) inside the lab's kafka-group-coordinator
jar. The output is data in groupctl's spec language (protocol/schema.py), committed, and
checked field by field against the jar by tests/unit/test_record_schemas.py; run this
again when the lab's Kafka version moves:

    PYTHONPATH=. python tools/gen_record_schemas.py > groupctl/protocol/records/schemas.py

`--early-access` writes the layouts early-access brokers wrote under the same version
numbers (KIP-848 in Kafka 3.7, share groups in 4.0), where they differ from the current
jar's, so a decoder can tell such a record from a damaged one:

    PYTHONPATH=. python tools/gen_record_schemas.py --early-access \
        > groupctl/protocol/records/early_access.py
"""
from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path
from groupctl.protocol.jsonspec import parse_versions as versions, snake

PRIMITIVES = {"int8": "Int8", "int16": "Int16", "uint16": "Uint16", "int32": "Int32",
              "int64": "Int64", "float64": "Float64", "bool": "Bool", "string": "String",
              "bytes": "Bytes", "uuid": "Uuid", "records": "Records"}


def read_jar_specs(jar: Path) -> dict[str, dict]:
    specs = {}
    with zipfile.ZipFile(jar) as zf:
        for name in zf.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                text = "\n".join(line for line in zf.read(name).decode().splitlines()
                                 if not line.lstrip().startswith("//"))
                specs[Path(name).stem] = with_versions(json.loads(text))
    return specs


def with_versions(spec: dict) -> dict:
    """Kafka's generator lets a tagged field leave out "versions" (they are then its
    taggedVersions: StreamsGroupMetadataValue.LastAssignmentConfigs); fill them in."""
    def fill(fields):
        for f in fields:
            if "versions" not in f and "taggedVersions" in f:
                f["versions"] = f["taggedVersions"]
            fill(f.get("fields", ()))

    fill(spec.get("fields", ()))
    for cs in spec.get("commonStructs", ()):
        fill(cs["fields"])
    return spec


# Early-access releases and the record types they wrote in a layout of their own.
EARLY_ACCESS = (("3.7.2", range(3, 9)), ("4.0.2", range(9, 15)))


def coordinator_jar(version: str | None = None) -> Path:
    from groupctl.lab.dist import kafka_libs

    jars = sorted(Path(kafka_libs(version)).glob("kafka-group-coordinator-[0-9]*.jar"))
    if not jars:
        raise SystemExit(f"no kafka-group-coordinator jar in {kafka_libs()}")
    return jars[-1]




class Gen:
    def __init__(self, spec: dict, prefix: str):
        self.common = {cs["name"]: cs["fields"] for cs in spec.get("commonStructs", [])}
        self.prefix = prefix
        self.defs: list[str] = []      # module-level named structs (commonStructs)
        self.named: dict[str, str] = {}

    def struct(self, fields: list, indent: int) -> str:
        pad = "    " * indent
        inner = "".join(f"{pad}    {self.field(f, indent + 1)},\n" for f in fields)
        return f"Struct(\n{inner}{pad})"

    def common_struct(self, name: str) -> str:
        if name not in self.named:
            var = f"_{self.prefix}_{name}".upper()
            self.named[name] = var
            self.defs.append(f"{var} = {self.struct(self.common[name], 0)}\n")
        return self.named[name]

    def type_expr(self, jf: dict, indent: int) -> str:
        t = jf["type"]
        if t.startswith("[]"):
            item = t[2:]
            if item in PRIMITIVES:
                return f"Array({PRIMITIVES[item]})"
            if "fields" in jf:
                return f"Array({self.struct(jf['fields'], indent)})"
            return f"Array({self.common_struct(item)})"
        if t in PRIMITIVES:
            return PRIMITIVES[t]
        return self.struct(jf["fields"], indent) if "fields" in jf else self.common_struct(t)

    def field(self, jf: dict, indent: int) -> str:
        args = [repr(snake(jf["name"])), self.type_expr(jf, indent)]
        lo, hi = versions(jf["versions"])
        if lo:
            args.append(f"since={lo}")
        if hi is not None:
            args.append(f"until={hi}")
        nullable = versions(jf.get("nullableVersions"))
        if nullable is not None:
            args.append("nullable=True" if nullable[0] == lo else f"nullable={nullable[0]}")
        # JSON null is no default at all for Kafka's generator (an array is then empty, a
        # struct default-filled); only the string "null" makes the default null
        if jf.get("default") is not None:
            args.append(f"default={self.default(jf)!r}")
        if "tag" in jf:
            args.append(f"tag={jf['tag']}")
            tagged = versions(jf["taggedVersions"])
            if tagged[0] != lo:
                args.append(f"tagged_since={tagged[0]}")
        return f"Field({', '.join(args)})"

    @staticmethod
    def default(jf: dict):
        t, d = jf["type"], jf.get("default")
        if d == "null":
            return None
        if t in ("int8", "int16", "uint16", "int32", "int64"):
            return d if isinstance(d, int) else int(d, 0)   # the JSON gives "0x7f" or 5
        if t == "float64":
            return float(d)
        if t == "bool":
            return d if isinstance(d, bool) else d == "true"
        return d


HEADER = '''"""The group coordinator's record schemas (`__consumer_offsets`), as data.

GENERATED by tools/gen_record_schemas.py from the JSON specs inside {jar}
(common/message/*Key.json and *Value.json); tests/unit/test_record_schemas.py checks them
field by field against the jar. Do not edit by hand: run the generator again.

RECORD_TYPES maps a record type (the key's int16 prefix, the specs' apiKey) to its
RecordSchema: the key's fields (version 0, never flexible) and the value's fields with
the value versions this Kafka knows and the first flexible one.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..schema import (  # noqa: F401 - every primitive, whether this Kafka uses it or not
    Array, Bool, Bytes, Field, Float64, Int8, Int16, Int32, Int64, Records, String, Struct,
    Uint16, Uuid,
)


@dataclass(frozen=True)
class RecordSchema:
    type: int
    name: str                 # "GroupMetadata": the specs' name without Key / Value
    key: Struct
    value: Struct
    value_versions: tuple[int, int]
    value_flexible_from: int | None

    def value_flexible(self, version: int) -> bool:
        return self.value_flexible_from is not None and version >= self.value_flexible_from

'''


def entries(specs: dict, prefix: str = "", types=None) -> dict[int, tuple[list, str, str]]:
    """{record type: (module-level defs, the RecordSchema expression, the value's spec
    as JSON text)} of the jar's specs."""
    out = {}
    keys = sorted((s for s in specs.values() if _record_type(s) is not None),
                  key=_record_type)
    for key in keys:
        rtype = _record_type(key)
        if types is not None and rtype not in types:
            continue
        name = key["name"][:-len("Key")]
        value = specs[name + "Value"]
        if key.get("type") == "data":   # its fields carry the record type as version
            key = dict(key, fields=[dict(f, versions="0+") for f in key["fields"]])
        kg, vg = Gen(key, prefix + name + "_key"), Gen(value, prefix + name + "_value")
        kexpr, vexpr = kg.struct(key["fields"], 1), vg.struct(value["fields"], 1)
        lo, hi = versions(value["validVersions"])
        flex = versions(value["flexibleVersions"])
        expr = (f"RecordSchema(\n        {rtype}, {name!r},\n"
                f"        key={kexpr.replace(chr(10), chr(10) + '    ')},\n"
                f"        value={vexpr.replace(chr(10), chr(10) + '    ')},\n"
                f"        value_versions=({lo}, {hi}), "
                f"value_flexible_from={flex[0] if flex else None})")
        layout = json.dumps(_no_docs([value.get("fields"), value.get("commonStructs"),
                                      value["validVersions"], value.get("flexibleVersions")]),
                            sort_keys=True)
        out[rtype] = (kg.defs + vg.defs, expr, layout)
    return out


def _no_docs(spec):
    """A spec without its "about" texts: the layout alone."""
    if isinstance(spec, dict):
        return {k: _no_docs(v) for k, v in spec.items() if k != "about"}
    if isinstance(spec, list):
        return [_no_docs(v) for v in spec]
    return spec


def _record_type(spec: dict) -> int | None:
    """A key spec's record type: its apiKey (Kafka 3.9 and later: "coordinator-key"), or
    before that the one version a "data" key spec has (3.7's ConsumerGroupMetadataKey:
    validVersions "3")."""
    if spec.get("type") == "coordinator-key":
        return spec["apiKey"]
    if (spec.get("type") == "data" and spec["name"].endswith("Key")
            and spec["validVersions"].isdigit()):   # OffsetCommitKey's "0-1": two types
        return int(spec["validVersions"])
    return None


def main() -> None:
    jar = coordinator_jar()
    out = [HEADER.format(jar=jar.name)]
    body = []
    for rtype, (defs, expr, _) in entries(read_jar_specs(jar)).items():
        out += defs
        body.append(f"    {rtype}: {expr},\n")
    out.append("\nRECORD_TYPES: dict[int, RecordSchema] = {\n" + "".join(body) + "}\n")
    sys.stdout.write("".join(out))


EARLY_HEADER = '''"""Layouts that early-access brokers wrote under the record versions of today's.

GENERATED by tools/gen_record_schemas.py --early-access from the JSON specs inside
{jars}: each record type whose value spec there differs from {current}'s. Kafka 3.7's
KIP-848 (early access) and 4.0's share groups (early access) wrote their records under
value version 0 in a layout later releases changed without a new version: a value that
does not decode with schemas.py but does with one of these was written by that broker,
and is said so, not called damaged. Do not edit by hand: run the generator again.
"""
from __future__ import annotations

from ..schema import (  # noqa: F401 - every primitive, whether these use it or not
    Array, Bool, Bytes, Field, Float64, Int8, Int16, Int32, Int64, Records, String, Struct,
    Uint16, Uuid,
)
from .schemas import RECORD_TYPES, RecordSchema

'''


def early_access_main() -> None:
    current_jar = coordinator_jar()
    current = entries(read_jar_specs(current_jar))
    out, body, jars = [], [], []
    for version, types in EARLY_ACCESS:
        jar = coordinator_jar(version)
        jars.append(jar.name)
        label = "Kafka " + ".".join(version.split(".")[:2])
        prefix = "ea" + version.replace(".", "") + "_"
        for rtype, (defs, expr, layout) in entries(read_jar_specs(jar), prefix, types).items():
            if rtype in current and current[rtype][2] == layout:
                continue   # the same layout as today's: decoded as it is
            # the key as today's schema reads it (an early key spec's fields carry the
            # record type as their version); the value as the early broker wrote it
            expr = re.sub(r"key=Struct\(.*?\n        \),\n", f"key=RECORD_TYPES[{rtype}].key,\n",
                          expr, count=1, flags=re.S) if rtype in current else expr
            out += [d for d in defs if "_KEY_" not in d.split("=", 1)[0]]
            body.append(f"    {rtype}: ({label!r}, {expr}),\n")
    sys.stdout.write(EARLY_HEADER.format(jars=", ".join(jars), current=current_jar.name)
                     + "".join(out)
                     + "\n# record type -> (the release that wrote it, its layout there)\n"
                     + "EARLY_ACCESS: dict[int, tuple[str, RecordSchema]] = {\n"
                     + "".join(body) + "}\n")


if __name__ == "__main__":
    early_access_main() if "--early-access" in sys.argv[1:] else main()
