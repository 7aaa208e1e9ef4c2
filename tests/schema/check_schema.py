#!/usr/bin/env python3
"""Keeps schema/cudag.schema.json, the language and the parser from drifting apart.

    check_schema.py SRCROOT --files        the schema accepts every good file
                                           and rejects every bad one
    check_schema.py SRCROOT --docs         the schema matches the docs
    check_schema.py SRCROOT --cudag EXE    `cudag check` agrees with the schema

--files: every file in graphs/, kernels/, tests/data/good/ and
tests/data/schema-good/ validates, and every file in tests/data/schema-bad/
is rejected with an error at the JSON pointer its `# error-at:` comment names
(so a bad file fails for the reason it was written for, not by accident).

--docs: the schema is a valid draft 2020-12 schema and every key in it has a
description (the hover text editors show); its enums and keys match the
tables of docs/language.md and the enums of include/cudag.h; every ```yaml
example of docs/language.md validates (fragments are wrapped in `cudag: 1`
or `nodes:`; outlines with `...` and blocks listing alternatives are skipped).

--cudag: `cudag check` accepts every schema-good file and rejects every
schema-bad one with status 1, and refuses a missing file with status 5.

Files are read the way the YAML language server reads them: YAML 1.2 core
scalars (`yes`, `on` stay strings, `1e-6` is a float), merge keys resolved,
mapping keys as strings, and a repeated key is an error as it is in cudag.
Exits 0 on success, 1 on a failure, 77 (meson's SKIP) when python3-yaml or
python3-jsonschema (>= 4.0) is missing.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import yaml
    import jsonschema
    from jsonschema import Draft202012Validator
    MISSING = None
except ImportError as e:  # The CI image and developers install them from apt.
    MISSING = e

Loader = None


def make_loader():
    """A SafeLoader with YAML 1.2 core-schema scalars, as editors read files:
    PyYAML's YAML 1.1 resolvers for bool, int, float and timestamp go; null,
    merge (`<<`) and value stay; the YAML 1.2 core ones come in."""

    class Core(yaml.SafeLoader):
        pass

    Core.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers
                if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "timestamp")]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    core = [
        ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
        ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$",
         "-+0123456789"),
        ("tag:yaml.org,2002:float",
         r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
         r"|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$", "-+.0123456789"),
    ]
    for tag, rx, first in core:
        Core.add_implicit_resolver(tag, re.compile(rx), list(first))
    Core.add_constructor("tag:yaml.org,2002:int", _int)
    Core.add_constructor("tag:yaml.org,2002:float", _float)
    Core.add_constructor("tag:yaml.org,2002:bool", _bool)
    return Core


def _int(loader, node):
    v = loader.construct_scalar(node)
    if v.startswith("0x"):
        return int(v[2:], 16)
    if v.startswith("0o"):
        return int(v[2:], 8)
    return int(v, 10)


def _float(loader, node):
    v = loader.construct_scalar(node).lower()
    if v.endswith(".inf"):
        return float("-inf") if v.startswith("-") else float("inf")
    if v == ".nan":
        return float("nan")
    return float(v)


def _bool(loader, node):
    return loader.construct_scalar(node).lower() == "true"


def duplicate_keys(text):
    """Returns 'line N: key' strings for keys repeated in one mapping.

    PyYAML silently keeps the last one, while cudag reports an error, so a
    valid-looking document could hide a mistake.  Checked on the composed
    node tree, before merge keys are expanded (a key written beside `<<`
    rightly overrides a merged one)."""
    dups = []
    seen_nodes = set()

    def walk(node):
        if id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = set()
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    if k.value in keys:
                        dups.append(f"line {k.start_mark.line + 1}: {k.value}")
                    keys.add(k.value)
                walk(k)
                walk(v)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v)

    for doc in yaml.compose_all(text, Loader=Loader):
        walk(doc)
    return dups


def jsonify(x):
    """Mapping keys become strings, as they are in JSON (and in editors)."""
    if isinstance(x, dict):
        return {str(k) if not isinstance(k, bool) else str(k).lower(): jsonify(v)
                for k, v in x.items()}
    if isinstance(x, list):
        return [jsonify(v) for v in x]
    return x


def load_text(text):
    docs = list(yaml.load_all(text, Loader=Loader))
    if len(docs) != 1:
        raise ValueError(f"{len(docs)} YAML documents, expected 1")
    return jsonify(docs[0])


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def all_errors(errors):
    """Every error, with the ones anyOf/if nested in their context."""
    for e in errors:
        yield e
        yield from all_errors(e.context or [])


def describe(e):
    return f"{pointer(e.absolute_path) or '/'}: {e.message}"


class Check:
    def __init__(self):
        self.failures = 0
        self.passes = 0

    def ok(self, what):
        self.passes += 1
        print(f"ok   {what}")

    def fail(self, what, why):
        self.failures += 1
        print(f"FAIL {what}")
        for line in str(why).splitlines():
            print(f"     {line}")


def described(sub, defs):
    """True when editors find hover text for sub: its own description, or
    that of the definition it refers to."""
    if not isinstance(sub, dict):
        return False
    if "description" in sub:
        return True
    ref = sub.get("$ref", "")
    return (ref.startswith("#/$defs/")
            and described(defs.get(ref[len("#/$defs/"):]), defs))


def walk_schema(node, where, defs, missing):
    """Collects the places where a key's schema has no description."""
    if isinstance(node, dict):
        for group in ("properties", "patternProperties", "$defs"):
            for key, sub in node.get(group, {}).items():
                if not described(sub, defs):
                    missing.append(f"{where}/{group}/{key}")
        for key, sub in node.items():
            walk_schema(sub, f"{where}/{key}", defs, missing)
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            walk_schema(sub, f"{where}/{i}", defs, missing)


def md_section(text, heading):
    """The lines of the Markdown section that starts with `heading`."""
    lines = text.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    try:
        start = lines.index(heading) + 1
    except ValueError:
        return []
    out = []
    for line in lines[start:]:
        m = re.match(r"^(#+) ", line)
        if m and len(m.group(1)) <= level:
            break
        out.append(line)
    return out


def md_table_keys(lines):
    """First-column `code` words of the Markdown tables in `lines`."""
    keys = []
    for line in lines:
        m = re.match(r"^\|\s*`([^`]+)`", line)
        if m:
            keys.append(m.group(1))
    return keys


def check_drift(src, schema, chk):
    lang = open(os.path.join(src, "docs", "language.md"), encoding="utf-8").read()
    header = open(os.path.join(src, "include", "cudag.h"), encoding="utf-8").read()
    defs = schema["$defs"]

    top_doc = md_table_keys(md_section(lang, "## Top-level keys"))
    top_schema = list(schema["properties"])
    if sorted(top_doc) == sorted(top_schema) and top_doc:
        chk.ok("top-level keys match docs/language.md")
    else:
        chk.fail("top-level keys match docs/language.md",
                 f"docs: {top_doc}\nschema: {top_schema}")

    buf_doc = md_table_keys(md_section(lang, "## `buffers`"))
    buf_schema = list(defs["buffer"]["properties"])
    if sorted(buf_doc) == sorted(buf_schema) and buf_doc:
        chk.ok("buffer keys match docs/language.md")
    else:
        chk.fail("buffer keys match docs/language.md",
                 f"docs: {buf_doc}\nschema: {buf_schema}")

    kinds_doc = md_table_keys(md_section(lang, "### Edges with `after`"))
    kinds_h = [k.lower() for k in re.findall(r"\bCUDAG_EDGE_([A-Z_]+)\s*=", header)]
    kinds_schema = defs["edgeKind"]["enum"]
    if sorted(kinds_doc) == sorted(kinds_schema) == sorted(kinds_h):
        chk.ok("edge kinds match docs/language.md and cudag.h")
    else:
        chk.fail("edge kinds match docs/language.md and cudag.h",
                 f"docs: {kinds_doc}\ncudag.h: {kinds_h}\nschema: {kinds_schema}")

    m = re.search(r"^Types: (.*?)\(", lang, re.M | re.S)
    types_doc = " ".join(re.findall(r"`([^`]+)`", m.group(1))).split() if m else []
    types_h = [t.lower() for t in re.findall(r"\bCUDAG_TYPE_([A-Z0-9]+)\b", header)
               if t not in ("NONE", "COUNT")]
    # ptr.read, ptr.write and ptr.rw are ptr with an access mode (docs/language.md,
    # "Access modes"), not types of their own.
    types_schema = [t for t in defs["paramType"]["enum"] if "." not in t]
    buf_types = defs["bufferType"]["enum"]
    if (sorted(types_doc) == sorted(types_schema) == sorted(set(types_h))
            and sorted(buf_types) == sorted(set(types_schema) - {"ptr", "cond"})):
        chk.ok("types match docs/language.md and cudag.h")
    else:
        chk.fail("types match docs/language.md and cudag.h",
                 f"docs: {types_doc}\ncudag.h: {types_h}\nschema: {types_schema} / "
                 f"buffers {buf_types}")

    inits = defs["buffer"]["properties"]["init"]["anyOf"][0]["enum"]
    row = next((l for l in md_section(lang, "## `buffers`") if l.startswith("| `init`")), "")
    inits_doc = re.findall(r"`(zero|iota|random|[a-z_]+)`", row.split("|")[2]) if row else []
    if sorted(inits) == sorted(inits_doc):
        chk.ok("init forms match docs/language.md")
    else:
        chk.fail("init forms match docs/language.md", f"docs: {inits_doc}\nschema: {inits}")


def check_doc_examples(src, validator, chk):
    """Validates the ```yaml blocks of docs/language.md, wrapped as files."""
    lang = open(os.path.join(src, "docs", "language.md"), encoding="utf-8").read()
    blocks = re.findall(r"^```yaml\n(.*?)^```", lang, re.M | re.S)
    checked = 0
    for i, block in enumerate(blocks, 1):
        what = f"docs/language.md yaml example {i}"
        if block.startswith("cudag:"):
            text = block
        elif block.startswith(" "):
            text = "cudag: 1\nnodes:\n" + block
        else:
            text = "cudag: 1\n" + block
        if re.search(r"^\s+\.\.\.$", block, re.M):
            print(f"skip {what}: an outline (`...`)")
            continue
        try:
            if duplicate_keys(text):
                print(f"skip {what}: lists alternatives (repeated keys)")
                continue
            doc = load_text(text)
        except yaml.YAMLError as e:
            chk.fail(what, f"not valid YAML (libyaml reads it the same way): {e}\n"
                     "Inside [...] or {...}, quote names and expressions that hold "
                     "',', '[', ']', '{' or '}'.\n" + block)
            continue
        errs = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errs:
            chk.fail(what, "\n".join(describe(e) for e in errs) + "\n" + block)
        else:
            checked += 1
            chk.ok(what)
    if len(blocks) - checked > 5:
        chk.fail("docs/language.md examples", f"only {checked} of {len(blocks)} checked")


def yaml_files(*dirs):
    out = []
    for d in dirs:
        for ext in ("yaml", "yml"):
            out += glob.glob(os.path.join(d, "**", "*." + ext), recursive=True)
    return sorted(out)


def read_doc(path):
    text = open(path, encoding="utf-8").read()
    dups = duplicate_keys(text)
    if dups:
        raise ValueError("duplicate keys: " + ", ".join(dups))
    return text, load_text(text)


def rel(src, path):
    return os.path.relpath(path, src)


def check_files(src, validator, chk):
    good = yaml_files(*(os.path.join(src, d) for d in
                        ("graphs", "kernels", "tests/data/good", "tests/data/schema-good")))
    if not good:
        chk.fail("good files", "no file found")
    for path in good:
        what = f"valid: {rel(src, path)}"
        try:
            _, doc = read_doc(path)
        except (yaml.YAMLError, ValueError) as e:
            chk.fail(what, e)
            continue
        errs = list(validator.iter_errors(doc))
        if errs:
            best = jsonschema.exceptions.best_match(errs)
            chk.fail(what, "\n".join([describe(best)] + [describe(e) for e in errs
                                                         if e is not best]))
        else:
            chk.ok(what)

    bad = yaml_files(os.path.join(src, "tests/data/schema-bad"))
    if len(bad) < 12:
        chk.fail("bad files", f"only {len(bad)} in tests/data/schema-bad")
    for path in bad:
        what = f"rejected: {rel(src, path)}"
        try:
            text, doc = read_doc(path)
        except (yaml.YAMLError, ValueError) as e:
            chk.fail(what, f"not loadable, so it tests nothing: {e}")
            continue
        m = re.search(r"^# error-at: *(\S*)", text, re.M)
        if not m or not text.startswith("#"):
            chk.fail(what, "needs a first-line comment saying what is wrong and "
                           "an `# error-at: /json/pointer` line")
            continue
        where = "" if m.group(1) == "/" else m.group(1)
        errs = list(validator.iter_errors(doc))
        if not errs:
            chk.fail(what, "the schema accepts it")
            continue
        at = {pointer(e.absolute_path) for e in all_errors(errs)}
        if where in at:
            chk.ok(f"{what} ({describe(jsonschema.exceptions.best_match(errs))})")
        else:
            chk.fail(what, f"expected an error at {m.group(1)}, got:\n" +
                     "\n".join(describe(e) for e in all_errors(errs)))


def check_parser(src, exe, chk):
    """Asks `cudag check` about the schema's own good and bad files."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = subprocess.run([exe, "check", os.path.join(tmp, "missing.yaml")],
                               capture_output=True, text=True)
    # A missing file is an I/O error (status 5), never a clean check.
    if probe.returncode == 5:
        chk.ok("cudag check refuses a missing file")
    else:
        chk.fail("cudag check refuses a missing file",
                 f"exit status {probe.returncode}, expected 5")
    for expect, sub in ((0, "tests/data/schema-good"), (1, "tests/data/schema-bad")):
        for path in yaml_files(os.path.join(src, sub)):
            r = subprocess.run([exe, "check", path], capture_output=True, text=True)
            what = (f"cudag check {'accepts' if expect == 0 else 'rejects'} "
                    f"{rel(src, path)}")
            if r.returncode == expect:
                chk.ok(what)
            else:
                chk.fail(what, f"exit status {r.returncode}, expected {expect}\n"
                         + r.stdout + r.stderr)


USAGE = """usage: check_schema.py SRCROOT --files | --docs | --cudag EXE"""


def main(argv):
    if len(argv) < 3 or argv[2] not in ("--files", "--docs", "--cudag") \
            or len(argv) != (4 if argv[2] == "--cudag" else 3):
        print(USAGE)
        return 2
    src, mode = argv[1], argv[2]
    chk = Check()
    if mode == "--cudag":
        check_parser(src, argv[3], chk)
    elif MISSING is not None:
        print(f"SKIP: {MISSING}: install python3-yaml and python3-jsonschema (>= 4.0)")
        return SKIP
    else:
        global Loader
        Loader = make_loader()
        with open(os.path.join(src, "schema", "cudag.schema.json"), encoding="utf-8") as f:
            schema = json.load(f)
        try:
            Draft202012Validator.check_schema(schema)
            chk.ok("schema is valid draft 2020-12")
        except jsonschema.exceptions.SchemaError as e:
            chk.fail("schema is valid draft 2020-12", e)
            return 1
        validator = Draft202012Validator(schema)
        if mode == "--docs":
            missing = []
            walk_schema(schema, "#", schema.get("$defs", {}), missing)
            if missing:
                chk.fail("every key has a description", "\n".join(missing))
            else:
                chk.ok("every key has a description")
            check_drift(src, schema, chk)
            check_doc_examples(src, validator, chk)
        else:
            check_files(src, validator, chk)
    print(f"{chk.passes} passed, {chk.failures} failed")
    return 1 if chk.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
