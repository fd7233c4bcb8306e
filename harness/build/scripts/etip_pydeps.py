#!/usr/bin/env python3
"""etip: the Python dependencies a repository declares, read statically from its build descriptors.

    etip_pydeps.py SRC                 prints {"project", "requirements", "constraints", "sources",
                                       "skipped"} as JSON (see harness/build/README.md)
    etip_pydeps.py SRC --out-dir DIR   writes DIR/requirements.txt, constraints.txt, pydeps.json
                                       and prints a summary

SRC holds the descriptor files of one commit (pyproject.toml, setup.cfg, setup.py, requirement
files, tox.ini). Nothing is executed (setup.py is read with `ast`); standard library, Python 3.8+.
"""

import ast
import configparser
import json
import os
import re
import sys

try:
    import tomllib as _toml
except ImportError:  # Python < 3.11
    try:
        import tomli as _toml
    except ImportError:
        try:  # pip >= 21.2 vendors tomli
            from pip._vendor import tomli as _toml
        except ImportError:
            try:  # older pips (Debian bullseye's 20.3) vendor toml
                from pip._vendor import toml as _toml
            except ImportError:
                _toml = None

DEV_NAMES = {"dev", "develop", "development"}
TEST_PARTS = {"test", "tests", "testing"}
VCS_RE = re.compile(r"^(git|hg|svn|bzr)\+|@\s*(git|hg|svn|bzr)\+")
NAME_RE = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$", re.S)
ARCHIVE_SUFFIXES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2")
DOCS_RE = re.compile(r"(^|[-_./])docs?([-_./]|$)")
ETIP = "(etip)"


def canonical(name):
    """The PEP 503 normalised form of a project or extra name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_test_like(group):
    """A group or extra of test dependencies: test, tests, testing (also as a part: unit-tests)
    or dev, develop, development."""
    n = canonical(group)
    return n in DEV_NAMES or any(p in TEST_PARTS for p in n.split("-"))


def short(text, limit=70):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def with_marker(req, marker):
    """`req` with an environment marker added (and-ed with its own)."""
    if not marker:
        return req
    if ";" in req:
        base, own = req.split(";", 1)
        return "%s; (%s) and (%s)" % (base.strip(), own.strip(), marker.strip())
    return "%s; %s" % (req.strip(), marker.strip())


def parse_req(text):
    """(canonical name, extras, marker) of a PEP 508 string, or None when it is not one."""
    m = NAME_RE.match(text.strip())
    if not m:
        return None
    rest = m.group(3).strip()
    if rest and rest[0] not in "<>=!~@;(":
        return None
    extras = tuple(sorted(canonical(e) for e in (m.group(2) or "[]")[1:-1].split(",") if e.strip()))
    marker = rest.split(";", 1)[1] if ";" in rest else ""
    return canonical(m.group(1)), extras, "".join(marker.split()).lower()


def line_of(text, fragment):
    """The 1-based number of the first line of `text` holding `fragment` (None if none does)."""
    fragment = fragment.strip()
    for i, line in enumerate(text.splitlines(), 1):
        if fragment and fragment in line:
            return i
    return None


# Poetry version constraints


def _bump(version, index):
    """The release `version` with component `index` incremented and the rest zeroed."""
    nums = [int(n) for n in version.split(".")]
    upper = nums[: index + 1]
    upper[-1] += 1
    upper += [0] * (len(nums) - len(upper))
    return ".".join(str(n) for n in upper)


def poetry_atom(atom):
    """One Poetry constraint (`^1.2`, `~1.2`, `1.2.*`, `>=1,<2` parts) as PEP 440 specifiers."""
    if atom in ("*", ""):
        return []
    if atom[0] in "^~" and not atom.startswith("~="):
        version = atom[1:]
        if not re.match(r"^\d+(\.\d+)*$", version):
            raise ValueError("%r is not a release version" % atom)
        nums = [int(n) for n in version.split(".")]
        if atom[0] == "^":
            nonzero = [i for i, n in enumerate(nums) if n != 0]
            index = nonzero[0] if nonzero else len(nums) - 1
        else:
            index = 0 if len(nums) == 1 else 1
        return [">=" + version, "<" + _bump(version, index)]
    m = re.match(r"^(===|==|!=|~=|<=|>=|<|>|=)?(\d[\w.*+!-]*)$", atom)
    if not m:
        raise ValueError("%r is not a version constraint" % atom)
    op = m.group(1) or "=="
    return [("==" if op == "=" else op) + m.group(2)]


def poetry_constraint(constraint):
    """A Poetry version constraint as a PEP 440 specifier set ("" for any version)."""
    c = str(constraint).strip()
    if "|" in c:
        raise ValueError("alternatives (%s) have no PEP 508 form" % c)
    c = re.sub(r"(===|==|!=|~=|<=|>=|<|>|=|\^|~)\s+", r"\1", c)
    specs = []
    for atom in re.split(r"\s*,\s*|\s+", c):
        specs += poetry_atom(atom)
    return ",".join(specs)


def python_marker(constraint):
    """A Poetry `python = "^3.8"` constraint as an environment marker."""
    parts = []
    for spec in poetry_constraint(constraint).split(","):
        if not spec:
            continue
        m = re.match(r"^(===|==|!=|~=|<=|>=|<|>)(.*)$", spec)
        var = "python_full_version" if m.group(2).count(".") >= 2 else "python_version"
        parts.append('%s %s "%s"' % (var, m.group(1), m.group(2)))
    return " and ".join(parts)


def poetry_requirements(name, spec):
    """([PEP 508 strings], [why notes]) for one Poetry dependency entry."""
    if isinstance(spec, list):
        pairs = [poetry_requirements(name, one) for one in spec]
        return [r for rs, _ in pairs for r in rs], [n for _, ns in pairs for n in ns]
    if not isinstance(spec, dict):
        spec = {"version": spec}
    for key, why in (("git", "a VCS dependency"), ("path", "a local path dependency")):
        if key in spec:
            return [], ["%s = %s: %s, not installed" % (name, short(spec[key]), why)]
    extras = spec.get("extras") or []
    head = name + ("[%s]" % ",".join(extras) if extras else "")
    notes = []
    markers = [spec["markers"]] if spec.get("markers") else []
    if spec.get("python"):
        try:
            markers.append(python_marker(spec["python"]))
        except ValueError as e:
            notes.append("%s: python constraint %s; installed for every Python" % (name, e))
    if spec.get("platform"):
        markers.append('sys_platform == "%s"' % spec["platform"])
    if "url" in spec:
        req = "%s @ %s" % (head, spec["url"])
    else:
        try:
            req = head + poetry_constraint(spec.get("version", "*"))
        except ValueError as e:
            notes.append("%s: version constraint %s; installed without one" % (name, e))
            req = head
    marker = " and ".join("(%s)" % m if len(markers) > 1 else m for m in markers if m)
    return [with_marker(req, marker)], notes


# setup.py, statically


class Dynamic(Exception):
    """A setup() argument that is not a literal (or a name bound to one at module level)."""


class SetupPy:
    """The literal keyword arguments of the setup() call of a setup.py."""

    def __init__(self, text):
        self.text = text
        self.tree = ast.parse(text)
        self.bindings = {}
        self.notes = []
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.bindings.setdefault(target.id, []).append(stmt)
        self.call = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and self.call is None:
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name == "setup":
                    self.call = node

    def segment(self, node):
        return short(ast.get_source_segment(self.text, node) or type(node).__name__, 60)

    def mutations(self, name):
        """Lines where a module-level name is changed after its assignment."""
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == name:
                found.append((node.lineno, self.segment(node)))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and getattr(node.func.value, "id", None) == name
                and node.func.attr in ("append", "extend", "insert", "update", "remove", "pop")
            ):
                found.append((node.lineno, self.segment(node)))
        return found

    def resolve_name(self, node, depth):
        stmts = self.bindings.get(node.id, [])
        if len(stmts) != 1:
            how = "assigned %d times" % len(stmts) if stmts else "not assigned at module level"
            raise Dynamic("%s is %s" % (node.id, how))
        for line, what in self.mutations(node.id):
            self.notes.append((line, "%s: changes %s; not evaluated" % (what, node.id)))
        return self.value(stmts[0].value, depth + 1)

    def value(self, node, depth=0):
        """A literal str, list of (str, line) or dict of such lists; raises Dynamic."""
        if depth > 8:
            raise Dynamic("too many indirections")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.resolve_name(node, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = []
            for elt in node.elts:
                v = self.value(elt, depth + 1)
                if not isinstance(v, str):
                    raise Dynamic("%s is not a string" % self.segment(elt))
                items.append((v, elt.lineno))
            return items
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            if isinstance(left, str) and isinstance(right, str):
                return left + right
        formatted = self.formatted(node, depth)
        if formatted is not None:
            return formatted
        if isinstance(node, ast.Dict) and None not in node.keys:
            out = {}
            for k, v in zip(node.keys, node.values):
                key = self.value(k, depth + 1)
                if not isinstance(key, str):
                    raise Dynamic("key %s is not a string" % self.segment(k))
                out[key] = (self.value(v, depth + 1), v.lineno)
            return out
        raise Dynamic("%s is computed" % self.segment(node))

    def strings(self, nodes, depth):
        values = [self.value(n, depth + 1) for n in nodes]
        if not all(isinstance(v, str) for v in values):
            raise Dynamic("a formatted value is not a string")
        return values

    def formatted(self, node, depth):
        """A string made of literal strings: `'mpmath>=%s' % mpmath_version` (sympy of 2019),
        `'x>={}'.format(v)`, `f'x>={v}'`; None when `node` is no such expression."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            fmt = self.value(node.left, depth + 1)
            right = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            args = self.strings(right, depth)
            if isinstance(fmt, str):
                try:
                    return fmt % tuple(args)
                except (TypeError, ValueError) as e:
                    raise Dynamic("%s: %s" % (self.segment(node), e))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and not node.keywords
        ):
            fmt = self.value(node.func.value, depth + 1)
            if isinstance(fmt, str):
                try:
                    return fmt.format(*self.strings(node.args, depth))
                except (IndexError, KeyError, ValueError) as e:
                    raise Dynamic("%s: %s" % (self.segment(node), e))
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    if v.format_spec is not None or v.conversion not in (-1, None):
                        raise Dynamic("%s is formatted" % self.segment(node))
                    parts.extend(self.strings([v.value], depth))
                else:
                    parts.extend(self.strings([v], depth))
            return "".join(parts)
        return None


# The collection


class Deps:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.requirements = []
        self.constraints = []
        self.sources = []
        self.skipped = []
        self.first = {}  # dedup key -> (text, file)
        self.constraint_keys = set()
        self.extras_done = set()
        self.read_files = set()
        # What the metadata declares, added after all of it is read (the name filters the
        # project itself out): chunks (file, what, items), extras by canonical name, test groups.
        self.name = None
        self.main = []
        self.extras = {}
        self.groups = []

    def extra(self, name, chunk):
        self.extras.setdefault(canonical(name), []).append(chunk)

    # -- bookkeeping

    def skip(self, file, line, why):
        self.skipped.append({"file": file, "line": line, "why": why})

    def source(self, file, what):
        self.sources.append({"file": file, "what": what})

    def read(self, rel):
        path = os.path.join(self.root, rel)
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def exists(self, rel):
        return os.path.isfile(os.path.join(self.root, rel))

    def rel(self, base_dir, path):
        """`path` (relative to `base_dir`, itself relative to the root) relative to the root, or
        None when it leaves the repository."""
        full = os.path.normpath(os.path.join(self.root, base_dir, os.path.expanduser(path)))
        if full != self.root and not full.startswith(self.root + os.sep):
            return None
        return os.path.relpath(full, self.root).replace(os.sep, "/")

    # -- adding requirements

    def classify(self, text, editable):
        """("req", text) | ("self", extras) | ("skip", why) for one requirement or pip argument.
        Local paths are relative to the root, as pip (run there) takes them."""
        s = text.strip()
        if VCS_RE.search(s):
            return "skip", "%s: a VCS URL, not installed" % s
        target = s
        for root in ("file:///${PROJECT_ROOT}", "file://${PROJECT_ROOT}", "${PROJECT_ROOT}"):
            target = target.replace(root, ".")
        for root in ("{root:uri}", "{root}"):
            target = target.replace(root, ".")
        if re.search(r"\{[^}]*\}", target):
            return "skip", "%s: a {...} field of the tool's templating, not a requirement" % s
        named = re.match(r"^[A-Za-z0-9][\w.-]*\s*(\[[^\]]*\])?\s*@\s*(\S+)\s*(;.*)?$", target)
        if named:
            extras, target = named.group(1) or "", named.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*://", target) and not target.startswith("file:"):
                return self.requirement(s)
        else:
            egg = re.search(r"#egg=[^\[&\s]*(\[[^\]]*\])", target)
            target = re.sub(r"#.*$", "", target).strip()
            m = re.match(r"^(.*?)(\[[^\]]*\])?$", target, re.S)
            target, extras = m.group(1).strip(), m.group(2) or (egg.group(1) if egg else "")
        if target.startswith("file:"):
            target = re.sub(r"^file:(//)?", "", target)
        local = target.startswith((".", "/", "~")) or "/" in target
        local = (local or target.lower().endswith(ARCHIVE_SUFFIXES)) and "://" not in target
        if not (local or editable or named):
            return self.requirement(s)
        if local and self.rel("", target) == ".":
            return "self", [e.strip() for e in extras[1:-1].split(",") if e.strip()]
        what = "a local path" if local or named else "an editable install"
        return "skip", "%s: %s, not installed" % (s, what)

    def requirement(self, s):
        parsed = parse_req(s)
        if parsed is None:
            return "skip", "%s: not a PEP 508 requirement" % s
        if self.name and parsed[0] == self.name:
            return "self", list(parsed[1])
        return "req", s

    def add(self, text, file, line, editable=False):
        """Adds one requirement (or the project's own extras); a different spelling of one
        already added is reported, the first one kept."""
        kind, value = self.classify(text, editable)
        if kind == "skip":
            self.skip(file, line, value)
        elif kind == "self":
            for extra in value:
                self.add_extra(extra, file, line)
        else:
            name, extras, marker = parse_req(value)
            key = (name, extras, marker)
            if key not in self.first:
                self.first[key] = (value, file)
                self.requirements.append(value)
            else:
                first, where = self.first[key]
                same = "".join(first.split()).lower() == "".join(value.split()).lower()
                if not same and file != ETIP:
                    why = "%s: duplicate of %s (%s); the first spelling is kept"
                    self.skip(file, line, why % (value, first, where))

    def add_chunk(self, chunk):
        """A chunk (file, what, items or a function giving them) of the project's metadata."""
        file, what, items = chunk
        self.source(file, what)
        self.add_items(items() if callable(items) else items)

    def add_extra(self, extra, file, line):
        """The project's own extra `extra` (named by `.[extra]`, a self-reference or a tool)."""
        key = canonical(extra)
        if key in self.extras_done:
            return
        self.extras_done.add(key)
        chunks = self.extras.get(key)
        if chunks is None:
            self.skip(file, line, "extra %r is not declared by the project" % extra)
            return
        for chunk in chunks:
            self.add_chunk(chunk)

    # -- requirement files (also -r/-c targets and tox deps)

    def req_file(self, rel, file, line, what, constraint=False):
        """Adds the requirements (or constraints) of a requirements file, read once."""
        if rel is None:
            self.skip(file, line, "an included file outside the repository, not read")
        elif rel not in self.read_files and not self.exists(rel):
            why = "%s is not among the descriptor files copied into the env layer" % rel
            self.skip(file, line, why)
        elif rel not in self.read_files:
            self.read_files.add(rel)
            self.source(rel, what)
            for lineno, text in logical_lines(self.read(rel)):
                self.req_line(text, rel, lineno, os.path.dirname(rel), constraint)

    def req_line(self, text, file, line, base_dir, constraint=False):
        """Adds one requirements-file line; `-r`/`-c` paths are relative to `base_dir` (the
        file's folder), local project paths to the root."""
        if not text.startswith("-"):
            text = re.split(r"\s+--?[A-Za-z]", text)[0].strip()
            return self.add_constraint(text, file, line) if constraint else self.add(text, file, line)
        if text.startswith("--"):
            m = re.match(r"^(--[A-Za-z][\w-]*)(?:\s*=\s*|\s+)?(.*)$", text)
        else:
            m = re.match(r"^(-[A-Za-z])\s*(.*)$", text)
        opt, arg = (m.group(1), m.group(2).strip()) if m else (text, "")
        if opt in ("-r", "--requirement", "-c", "--constraint"):
            is_c = opt in ("-c", "--constraint") or constraint
            what = "%s (%s from %s)" % ("constraints" if is_c else "requirements", opt, file)
            self.req_file(self.rel(base_dir, arg), file, line, what, is_c)
        elif opt in ("-e", "--editable") and not constraint:
            self.add(arg, file, line, editable=True)
        else:
            why = "%s: a pip option, not used (pip's settings come from the build's PIP_* variables)"
            self.skip(file, line, why % short(text, 50))

    def add_constraint(self, text, file, line):
        if parse_req(text) is None or VCS_RE.search(text):
            self.skip(file, line, "%s: not a PEP 508 constraint" % text)
            return
        key = "".join(text.split()).lower()
        if key not in self.constraint_keys:
            self.constraint_keys.add(key)
            self.constraints.append(text)

    def add_items(self, items):
        for text, file, line, editable in items:
            self.add(text, file, line, editable)

    def dynamic_files(self, value, file, what):
        """A chunk reading `file:`-style references (setuptools dynamic metadata, setup.cfg) when
        it is added."""
        files = value if isinstance(value, list) else str(value).split()

        def items():
            for f in files:
                self.req_file(self.rel("", str(f)), file, None, "requirements (%s)" % what)
            return []

        return (file, what, items)


def logical_lines(text):
    """(line number, text) of a requirements file: comments removed, continuations joined."""
    pending, start = "", None
    for i, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if start is None:
            start = i
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            yield start, full
        start = None
    if pending.strip():
        yield start, pending.strip()


def cfg_list(value):
    """A setup.cfg list: one item a line, or `;`-separated on one line (setuptools' rule)."""
    value = value.strip()
    items = value.splitlines() if "\n" in value else value.split(";")
    return [i.strip() for i in items if i.strip() and not i.strip().startswith("#")]


# The formats


def table(value):
    return value if isinstance(value, dict) else {}


def meta_items(d, file, text, values, where):
    """Items of a list of requirement strings from TOML or setup.cfg (`-e ...` entries too)."""
    if not isinstance(values, list):
        d.skip(file, None, "%s is not a list: not read" % where)
        return []
    items = []
    for v in values:
        if not isinstance(v, str):
            d.skip(file, None, "%s: %s is not a string: not read" % (where, short(v, 40)))
            continue
        editable = re.match(r"^(-e|--editable)\s+(.*)$", v.strip())
        entry = editable.group(2) if editable else v
        items.append((entry, file, line_of(text, v), bool(editable)))
    return items


def read_toml(d, file):
    """(text, data) of a TOML file of the root, or None when it cannot be read (reported)."""
    if _toml is None:
        why = "no TOML parser in this Python (tomllib is 3.11+, tomli is not installed): not read"
        d.skip(file, None, why)
        return None
    text = d.read(file)
    try:
        return text, _toml.loads(text)
    except ValueError as e:
        d.skip(file, None, "not valid TOML (%s): not read" % short(e))
        return None


def load_pyproject(d):
    file = "pyproject.toml"
    read = read_toml(d, file)
    if read is None:
        return
    text, data = read
    tool = table(data.get("tool"))
    project, poetry = table(data.get("project")), table(tool.get("poetry"))
    for name in (project.get("name"), poetry.get("name")):
        if isinstance(name, str) and d.name is None:
            d.name = canonical(name)
    pep621(d, text, project, table(table(tool.get("setuptools")).get("dynamic")))
    dependency_groups(d, text, table(data.get("dependency-groups")))
    load_poetry(d, text, poetry)
    for env, spec in table(table(tool.get("hatch")).get("envs")).items():
        if env == "default" or is_test_like(env):
            load_hatch_env(d, text, env, table(spec))
    for group, values in table(table(tool.get("pdm")).get("dev-dependencies")).items():
        if is_test_like(group):
            what = "[tool.pdm.dev-dependencies] %s" % group
            d.groups.append((file, what, meta_items(d, file, text, values, what)))
    # The instance layer installs the project without build isolation: its build backend
    # (hatchling, flit_core, setuptools>=61, ...) must already be in the env venv.
    requires = table(data.get("build-system")).get("requires")
    if isinstance(requires, list):
        what = "[build-system] requires"
        d.groups.append((file, what, meta_items(d, file, text, requires, what)))


def pep621(d, text, project, dynamic):
    """[project] dependencies and optional-dependencies (setuptools' dynamic `file =` too)."""
    file, p = "pyproject.toml", d
    dyn = project.get("dynamic") if isinstance(project.get("dynamic"), list) else []
    if "dependencies" in project:
        what = "[project] dependencies"
        p.main.append((file, what, meta_items(d, file, text, project["dependencies"], what)))
    elif "dependencies" in dyn and "file" in table(dynamic.get("dependencies")):
        what = "[tool.setuptools.dynamic] dependencies"
        p.main.append(d.dynamic_files(dynamic["dependencies"]["file"], file, what))
    for extra, values in table(project.get("optional-dependencies")).items():
        what = "[project.optional-dependencies] %s" % extra
        p.extra(extra, (file, what, meta_items(d, file, text, values, what)))
    if "optional-dependencies" in dyn:
        for extra, spec in table(dynamic.get("optional-dependencies")).items():
            if "file" in table(spec):
                what = "[tool.setuptools.dynamic] optional-dependencies.%s" % extra
                p.extra(extra, d.dynamic_files(spec["file"], file, what))


def dependency_groups(d, text, groups):
    """PEP 735 groups named like test/dev, with `{include-group = ...}` expanded."""
    file = "pyproject.toml"
    by_name = {canonical(k): v for k, v in groups.items()}

    def expand(name, stack):
        values = by_name.get(canonical(name))
        if not isinstance(values, list):
            d.skip(file, None, "[dependency-groups] %s is not a list of requirements" % name)
            return []
        texts = []
        for v in values:
            inc = v.get("include-group") if isinstance(v, dict) else None
            if isinstance(inc, str) and canonical(inc) in stack:
                d.skip(file, line_of(text, inc), "include-group %s: a cycle, not followed" % inc)
            elif isinstance(inc, str):
                texts += expand(inc, stack + [canonical(inc)])
            else:
                texts.append(v)
        return texts

    for group in groups:
        if is_test_like(group):
            what = "[dependency-groups] %s" % group
            values = expand(group, [canonical(group)])
            d.groups.append((file, what, meta_items(d, file, text, values, what)))


def poetry_table(d, text, deps, where):
    """(main requirement strings, {canonical name: strings of optional ones}) of a Poetry table."""
    main, optional = [], {}
    for name, spec in table(deps).items():
        if canonical(name) == "python":
            continue
        reqs, notes = poetry_requirements(name, spec)
        for note in notes:
            d.skip("pyproject.toml", line_of(text, name), "%s %s" % (where, note))
        if isinstance(spec, dict) and spec.get("optional"):
            optional[canonical(name)] = reqs
        else:
            main += reqs
    return main, optional


def load_poetry(d, text, poetry):
    """[tool.poetry] dependencies (minus python), extras, test/dev groups, dev-dependencies."""
    file, p = "pyproject.toml", d
    if not poetry:
        return
    what = "[tool.poetry.dependencies]"
    main, optional = poetry_table(d, text, poetry.get("dependencies"), what)
    p.main.append((file, what, meta_items(d, file, text, main, what)))
    for extra, names in table(poetry.get("extras")).items():
        names = names if isinstance(names, list) else []
        reqs = []
        for n in names:
            reqs += optional.get(canonical(re.split(r"[\[<>=!~ ;]", str(n))[0]), [])
        what = "[tool.poetry.extras] %s" % extra
        p.extra(extra, (file, what, meta_items(d, file, text, reqs, what)))
    groups = [(g, table(t).get("dependencies")) for g, t in table(poetry.get("group")).items()]
    groups = [("[tool.poetry.group.%s.dependencies]" % g, t) for g, t in groups if is_test_like(g)]
    if "dev-dependencies" in poetry:
        groups.append(("[tool.poetry.dev-dependencies]", poetry["dev-dependencies"]))
    for what, deps in groups:
        reqs, optional = poetry_table(d, text, deps, what)
        reqs += [r for rs in optional.values() for r in rs]
        p.groups.append((file, what, meta_items(d, file, text, reqs, what)))


def load_hatch_env(d, text, env, spec):
    """A Hatch environment's dependencies, extra-dependencies and features (the project's extras)."""
    file = "pyproject.toml"
    what = "[tool.hatch.envs.%s]" % env
    items = []
    for key in ("dependencies", "extra-dependencies"):
        if key in spec:
            items += meta_items(d, file, text, spec[key], "%s %s" % (what, key))
    features = spec.get("features")
    if isinstance(features, list) and features:
        items.append((".[%s]" % ",".join(map(str, features)), file, line_of(text, "features"), False))
    d.groups.append((file, what, items))


PIPFILE_MARKERS = ("python_version", "python_full_version", "sys_platform", "platform_machine",
                   "platform_system", "os_name", "implementation_name",
                   "platform_python_implementation")


def pipfile_entry(name, spec):
    """(requirement text, editable) of a Pipfile entry, or (None, why not)."""
    if isinstance(spec, str):
        spec = spec.strip()
        return (name if spec in ("", "*") else name + spec), False
    if not isinstance(spec, dict):
        return None, "%s: not a version or a table" % name
    for vcs in ("git", "hg", "svn", "bzr"):
        if vcs in spec:
            return None, "%s: a VCS source (%s), not installed" % (name, vcs)
    extras = spec.get("extras")
    extras = "[%s]" % ",".join(map(str, extras)) if isinstance(extras, list) and extras else ""
    target = spec.get("path") or spec.get("file")
    if isinstance(target, str):
        return target + extras, bool(spec.get("editable"))
    version = spec.get("version", "*")
    version = version.strip() if isinstance(version, str) else "*"
    markers = [spec["markers"]] if isinstance(spec.get("markers"), str) else []
    markers += ["%s %s" % (k, spec[k]) for k in PIPFILE_MARKERS if isinstance(spec.get(k), str)]
    req = name + extras + ("" if version in ("", "*") else version)
    return req + ("; " + " and ".join("(%s)" % m for m in markers) if markers else ""), False


def load_pipfile(d):
    """pipenv's Pipfile: [packages] and [dev-packages] (what `pipenv install --dev` installs, the
    project's own test set-up from 2017 on); the versions come from the dependency date, not
    Pipfile.lock."""
    file = "Pipfile"
    read = read_toml(d, file)
    if read is None:
        return
    text, data = read

    def key_line(name):
        key = re.compile(r"""^\s*["']?%s["']?\s*=""" % re.escape(name))
        return next((i for i, l in enumerate(text.splitlines(), 1) if key.match(l)), None)

    for section in ("packages", "dev-packages"):
        items = []
        for name, spec in table(data.get(section)).items():
            req, editable = pipfile_entry(name, spec)
            if req is None:
                d.skip(file, key_line(name), "[%s] %s" % (section, editable))
                continue
            items.append((req, file, key_line(name), editable))
        chunk = (file, "[%s]" % section, items)
        if section == "packages":
            d.main.append(chunk)
        else:
            d.groups.append(chunk)


def load_setup_cfg(d):
    """[metadata] name, [options] install_requires and tests_require, [options.extras_require]."""
    file, p = "setup.cfg", d
    text = d.read(file)
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str
    try:
        cp.read_string(text)
    except configparser.Error as e:
        d.skip(file, getattr(e, "lineno", None), "not a valid setup.cfg (%s): not read" % short(e))
        return
    if p.name is None and cp.get("metadata", "name", fallback=""):
        p.name = canonical(cp.get("metadata", "name"))

    def chunk(what, value):
        if value.strip().startswith("file:"):
            return d.dynamic_files(re.split(r"[\s,]+", value.strip()[5:].strip()), file, what)
        return (file, what, meta_items(d, file, text, cfg_list(value), what))

    for key, dest in (("install_requires", p.main), ("tests_require", p.groups)):
        if cp.has_option("options", key):
            dest.append(chunk("[options] %s" % key, cp.get("options", key)))
    if cp.has_section("options.extras_require"):
        for extra in cp.options("options.extras_require"):
            what = "[options.extras_require] %s" % extra
            p.extra(extra, chunk(what, cp.get("options.extras_require", extra)))


def setup_list(d, sp, kw, value, marker=""):
    """Items of a literal requirement list (or newline-separated string) of setup.py."""
    if isinstance(value, str):
        value = [(t, kw.value.lineno) for t in value.splitlines() if t.strip()]
    if not isinstance(value, list):
        d.skip("setup.py", kw.value.lineno, "%s: not a list of requirements" % kw.arg)
        return []
    return [(with_marker(t, marker), "setup.py", line, False) for t, line in value]


def load_setup_py(d):
    """The literal keyword arguments of setup(...): name, install_requires, tests_require,
    extras_require; anything computed is reported as skipped."""
    file, p = "setup.py", d
    try:
        sp = SetupPy(d.read(file))
    except SyntaxError as e:
        d.skip(file, e.lineno, "not valid Python 3 (%s): not read" % e.msg)
        return
    if sp.call is None:
        d.skip(file, None, "no setup() call: nothing read")
        return
    for kw in sp.call.keywords:
        if kw.arg is None:
            why = "setup(**%s): keyword arguments not read statically" % sp.segment(kw.value)
            d.skip(file, kw.value.lineno, why)
            continue
        if kw.arg not in ("name", "install_requires", "tests_require", "extras_require"):
            continue
        try:
            value = sp.value(kw.value)
        except Dynamic as e:
            if kw.arg != "name":
                d.skip(file, kw.value.lineno, "%s: %s; not evaluated" % (kw.arg, e))
            continue
        if kw.arg == "name":
            if isinstance(value, str) and p.name is None:
                p.name = canonical(value)
        elif kw.arg == "install_requires":
            p.main.append((file, kw.arg, setup_list(d, sp, kw, value)))
        elif kw.arg == "tests_require":
            p.groups.append((file, kw.arg, setup_list(d, sp, kw, value)))
        elif not isinstance(value, dict):
            d.skip(file, kw.value.lineno, "extras_require: not a dict of requirement lists")
        else:
            for key, (reqs, _) in value.items():
                extra, _, marker = key.partition(":")
                chunk = (file, "extras_require[%s]" % key, setup_list(d, sp, kw, reqs, marker))
                if extra.strip():
                    p.extra(extra.strip(), chunk)
                else:
                    p.main.append(chunk)
    for line, why in sorted(set(sp.notes)):
        d.skip(file, line, why)


def requirement_files(d):
    """Root requirements*.txt (requirements.txt first) and requirements/**.txt; documentation
    requirements only when another file includes them."""
    root = sorted(
        f
        for f in os.listdir(d.root)
        if f.lower().endswith(".txt") and "requirements" in f.lower() and d.exists(f)
    )
    root.sort(key=lambda f: f != "requirements.txt")
    nested = []
    for top, dirs, files in os.walk(os.path.join(d.root, "requirements")):
        dirs.sort()
        rel = os.path.relpath(top, d.root).replace(os.sep, "/")
        nested += ["%s/%s" % (rel, f) for f in sorted(files) if f.endswith(".txt")]
    docs = [f for f in root + nested if DOCS_RE.search(f.lower())]
    for rel in [f for f in root + nested if f not in docs]:
        d.req_file(rel, rel, None, "requirements")
    for rel in [f for f in docs if f not in d.read_files]:
        d.skip(rel, None, "documentation requirements, not needed to run the tests: not read")


def load_tox(d):
    """tox.ini [testenv] deps ({[section]key} substituted, -r followed) and extras."""
    file = "tox.ini"
    text = d.read(file)
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str
    try:
        cp.read_string(text)
    except configparser.Error as e:
        d.skip(file, getattr(e, "lineno", None), "not a valid tox.ini (%s): not read" % short(e))
        return
    if not cp.has_section("testenv"):
        return

    def subst(value, depth):
        def one(m):
            if depth > 5 or not cp.has_option(m.group(1), m.group(2)):
                return m.group(0)
            return subst(cp.get(m.group(1), m.group(2)), depth + 1)

        return re.sub(r"\{\[([^\]]+)\]([^}]+)\}", one, value)

    d.source(file, "[testenv] deps")
    for raw in subst(cp.get("testenv", "deps", fallback=""), 0).splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip().replace("{toxinidir}", ".")
        lineno = line_of(text, raw.strip())
        if re.match(r"^!?[\w.{},!-]+:\s+\S", line):
            d.skip(file, lineno, "%s: a tox factor-conditional dependency, not evaluated" % line)
        elif line:
            d.req_line(line, file, lineno, "")
    extras = [e for e in re.split(r"[\s,]+", cp.get("testenv", "extras", fallback="")) if e]
    if extras:
        d.add(".[%s]" % ",".join(extras), file, line_of(text, "extras"))



def collect(root):
    d = Deps(root)
    loaders = (
        ("pyproject.toml", load_pyproject),
        ("setup.cfg", load_setup_cfg),
        ("setup.py", load_setup_py),
    )
    for file, load in loaders:
        guarded(d, file, load)
    guarded(d, "Pipfile", load_pipfile)
    p = d
    for chunk in p.main:
        d.add_chunk(chunk)
    for extra in list(p.extras):
        if is_test_like(extra):
            d.add_extra(extra, None, None)
    for chunk in p.groups:
        d.add_chunk(chunk)
    guarded(d, "requirements", requirement_files, always=True)
    guarded(d, "tox.ini", load_tox)
    before = len(d.requirements)
    d.add("pytest", ETIP, None)
    if len(d.requirements) > before:
        d.source(ETIP, "pytest, always installed")
    return {
        "project": p.name,
        "requirements": d.requirements,
        "constraints": d.constraints,
        "sources": d.sources,
        "skipped": d.skipped,
    }


def guarded(d, file, load, always=False):
    """Runs one loader; a failure of etip's reading is reported, never fatal."""
    if not always and not d.exists(file):
        return
    try:
        load(d)
    except Exception as e:  # noqa: BLE001 - any surprise in a repository's file is data
        d.skip(file, None, "reading failed (%s: %s): not read" % (type(e).__name__, short(e)))


def write_out(result, out):
    os.makedirs(out, exist_ok=True)
    for name in ("requirements", "constraints"):
        with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in result[name]))
    with open(os.path.join(out, "pydeps.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
    for name in ("requirements", "constraints"):
        if result[name] or name == "requirements":
            path = os.path.join(out, name + ".txt")
            print("etip: %d Python %s (%s):" % (len(result[name]), name, path))
            print("".join("  %s\n" % r for r in result[name]), end="")
    print("etip: read " + "; ".join("%s: %s" % (s["file"], s["what"]) for s in result["sources"]))
    for s in result["skipped"]:
        at = s["file"] if s["line"] is None else "%s:%d" % (s["file"], s["line"])
        print("etip: skipped: %s: %s" % (at, s["why"]))


def main(argv):
    args = argv[1:]
    out = None
    if len(args) == 3 and args[1] == "--out-dir":
        out = args[2]
        args = args[:1]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write("usage: etip_pydeps.py SRC_DIR [--out-dir DIR]\n")
        return 2
    result = collect(args[0])
    if out is None:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        write_out(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
