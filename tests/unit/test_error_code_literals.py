"""No Kafka error code is written as a number outside groupctl/protocol/errors.py: every other
module names codes through `ErrorCode` (or error_for / error_by_name).

The scan is syntactic (ast), so it looks only where a number can be an error code:

- a comparison (==, !=, in, not in) between an error-ish value (a name, attribute, key or
  .get() of `code`, `error`, `err`, `ec`, `error_code`, `*_error_code`, `*_code` but not
  exit/return/status codes) and an int literal, or a tuple/list/set/frozenset of them;
- `error_code=<int>` / `code=<int>` keyword arguments, and `"error_code": <int>` dict items;
- int keys of a dict literal, or int members of a collection literal, bound to a name that
  says it holds codes (`*CODE*`, `*ERROR*`, `RETRY*`, `FATAL*`, `*RETRIABLE*`), and an int
  bound to the name of an error (`NOT_COORDINATOR = 16`);
- int arguments of error_for(...), of a call to a *Error class, and of `super().__init__`
  inside a *Error class;
- any int literal on a line whose comment names an error (`29,  # TOPIC_AUTHORIZATION_FAILED`).

Each finding is reported as file:line: the offending source.
"""
from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

from groupctl.protocol.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2] / "groupctl"
ALLOWED = {ROOT / "protocol" / "errors.py", ROOT / "protocol" / "error_codes.py"}  # + its generated mirror

_ERRORISH = re.compile(r"^(code|codes|error|err|ec|errors|error_code|error_codes|\w+_error_code"
                       r"|\w+_error_codes|\w+_code)$", re.I)
_NOT_ERRORS = re.compile(r"(exit|return|status|key|api|op|char|encoded|hash|zip)_?codes?$", re.I)
_CODE_HOLDER = re.compile(r"(CODE|ERROR|^_?RETRY|^_?FATAL|RETRIABLE|^_KNOWN)", re.I)
_NAMES = "|".join(sorted((m.name for m in ErrorCode if m.name != "NONE"), key=len, reverse=True))
_COMMENT_NAMES = re.compile(rf"#.*\b({_NAMES})\b")
_INT = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def _label(node: ast.AST) -> str | None:
    """The identifier a value is known by: x, a.b -> b, d["k"] -> k, d.get("k") -> k."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant)):
        return str(node.args[0].value)
    return None


def _errorish(node: ast.AST) -> bool:
    label = _label(node)
    return bool(label and _ERRORISH.match(label) and not _NOT_ERRORS.search(label))


def _ints(node: ast.AST) -> list[ast.AST]:
    """The int literals `node` is, or holds (tuple/list/set, frozenset({...}))."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [i for e in node.elts for i in _ints(e)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "frozenset", "set", "tuple") and node.args:
        return _ints(node.args[0])
    return []


class _Finder(ast.NodeVisitor):
    def __init__(self):
        self.lines: set[int] = set()
        self._classes: list[str] = []

    def _flag(self, nodes) -> None:
        self.lines.update(n.lineno for n in nodes)

    def visit_ClassDef(self, node):
        self._classes.append(node.name)
        self.generic_visit(node)
        self._classes.pop()

    def visit_Compare(self, node):
        sides = [node.left, *node.comparators]
        if any(_errorish(s) for s in sides):
            self._flag(i for s in sides for i in _ints(s))
        self.generic_visit(node)

    def visit_Call(self, node):
        for kw in node.keywords:
            if kw.arg in ("error_code", "code"):
                self._flag(_ints(kw.value))
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
            func, ast.Attribute) else ""
        in_error_class = bool(self._classes) and self._classes[-1].endswith("Error")
        if (name == "error_for" or name.endswith("Error")
                or (name == "__init__" and in_error_class)):
            self._flag(i for a in node.args if isinstance(a, (ast.Constant, ast.UnaryOp))
                       for i in _ints(a))
        self.generic_visit(node)

    def visit_Dict(self, node):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value in ("error_code", "code"):
                self._flag(_ints(v))
        self.generic_visit(node)

    def visit_Assign(self, node):
        self._holder(node.targets, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._holder([node.target], node.value)
        self.generic_visit(node)

    def _holder(self, targets, value) -> None:
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if any(n in ErrorCode.__members__ or (_ERRORISH.match(n) and not _NOT_ERRORS.search(n))
               for n in names):  # NOT_COORDINATOR = 16, error_code: int = 0
            self._flag(_ints(value))
        if not any(_CODE_HOLDER.search(n) for n in names):
            return
        if isinstance(value, ast.Dict):
            self._flag(i for k in value.keys if k is not None for i in _ints(k))
        elif not isinstance(value, (ast.Constant, ast.UnaryOp)):  # not KAFKA_ERROR = 7 (exit)
            self._flag(_ints(value))


def find_numeric_codes(source: str) -> list[int]:
    """Line numbers of `source` where an error code is written as a number."""
    finder = _Finder()
    finder.visit(ast.parse(source))
    lines = set(finder.lines)
    for no, line in enumerate(source.splitlines(), 1):
        code, _, _ = line.partition("#")
        if _COMMENT_NAMES.search(line) and _INT.search(code):
            lines.add(no)
    return sorted(lines)


def test_no_numeric_error_codes_outside_the_error_table():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path in ALLOWED:
            continue
        source = path.read_text()
        if "GENERATED by tools/gen_codecs.py" in source[:2000]:
            continue   # specs and codecs from Kafka's JSON: an error code's default is 0
        lines = source.splitlines()
        for no in find_numeric_codes(source):
            found.append(f"{path.relative_to(ROOT.parent)}:{no}: {lines[no - 1].strip()}")
    assert not found, ("error codes written as numbers (use groupctl.protocol.errors."
                       "ErrorCode):\n" + "\n".join(found))


def test_the_scan_finds_each_kind_of_numeric_code():
    bad = textwrap.dedent('''
        if body.get("error_code", 0) == 27: pass
        if code in (15, 16): pass
        if info.error_code != 0: pass
        FATAL_CODES = frozenset({82, 23})
        _KNOWN = {14: ("COORDINATOR_LOAD_IN_PROGRESS", True)}
        resp = {"error_code": 35, "api_keys": []}
        exc = KafkaError(api, 35, "x")
        RETRY_LEADER = frozenset({5, 6})
        AUTH = (
            29,  # TOPIC_AUTHORIZATION_FAILED
        )
        info = error_for(-1)
        class UnsupportedVersionError(Exception):
            def __init__(self, api):
                super().__init__(api, 35, "m")
        x = Thing(error_code=16)
        NOT_COORDINATOR = 16
        error_code: int = 0
    ''')
    assert find_numeric_codes(bad) == [2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16, 17, 18, 19]


def test_the_scan_leaves_other_numbers_alone():
    fine = textwrap.dedent('''
        if out.returncode != 0: pass
        if len(errors) == 1: pass
        if api.key == 18: pass
        if code == ErrorCode.NONE: pass
        timeout = 30
        counts = {0: "a"}
        sys.exit(2)  # usage error
        KAFKA_ERROR = 7
    ''')
    assert find_numeric_codes(fine) == []
