"""etip select's helper inside a session (run as `python -c SCRIPT COMMAND ARGS`, output JSON on
stdout):

- `hash TREE EXT...`: {path: sha256} of the tree's files with these extensions, relative paths,
  skipping version-control, virtual-environment, build and cache folders;
- `ranges TREE FILE...`: {file: [[qualified name, first line, last line], ...]} of the functions,
  methods and classes of Python files (ast; decorators included), named as etip's miner names them:
  the module path without `src/` and `.py`, `__init__` dropped, then classes and functions.
"""
import ast
import hashlib
import json
import os
import sys

SKIP = {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "node_modules", "build",
        "dist", "target", "__pycache__", ".mypy_cache", ".pytest_cache", ".etip-reports"}


def hashes(tree, exts):
    out = {}
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.endswith(".egg-info"))
        for f in sorted(files):
            if any(f.endswith(e) for e in exts):
                p = os.path.join(root, f)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, tree)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def module_name(rel):
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def ranges(tree, files):
    out = {}
    for rel in files:
        try:
            with open(os.path.join(tree, rel), "rb") as fh:
                node = ast.parse(fh.read(), rel)
        except (OSError, SyntaxError, ValueError):
            out[rel] = None
            continue
        found = []

        def walk(n, prefix):
            for c in ast.iter_child_nodes(n):
                if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = prefix + "." + c.name if prefix else c.name
                    first = min([c.lineno] + [d.lineno for d in c.decorator_list])
                    found.append([name, first, getattr(c, "end_lineno", c.lineno) or c.lineno])
                    walk(c, name)
                else:
                    walk(c, prefix)

        walk(node, module_name(rel))
        out[rel] = found
    return out


def main():
    cmd, tree = sys.argv[1], sys.argv[2]
    if cmd == "hash":
        result = hashes(tree, sys.argv[3:])
    elif cmd == "ranges":
        result = ranges(tree, sys.argv[3:])
    else:
        sys.exit("etip_select: unknown command %s" % cmd)
    json.dump(result, sys.stdout)


main()
