#!/usr/bin/python3
"""Every test program of the repository, for the differential campaign: the .cot files of
examples/, tests/, bench/ and fuzz/corpus/, the programs embedded in the C++ tests as raw strings
(R"(...)") and the ```cot blocks of docs/language.md, with the inputs the repository has for
them (the {"cases": [{"fn", "input"}, ...]} files beside the end-to-end programs, and plain
input objects such as examples/quickstart.json).

Embedded programs are written to a directory of their own, one file each, named after their
origin; the caller keeps only those that `cotangent check` accepts.
"""
import glob
import hashlib
import json
import os
import re

_RAW_STRING = re.compile(r'R"([A-Za-z0-9_]{0,16})\((.*?)\)\1"', re.S)
_COT_BLOCK = re.compile(r"^```cot\n(.*?)^```", re.S | re.M)


class Program:
    def __init__(self, path, origin):
        self.path, self.origin = path, origin
        self.cases = []  # [(fn, input object)] from the repository

    def __repr__(self):
        return f"Program({self.path!r})"


def _files(root, patterns):
    out = []
    for p in patterns:
        out += glob.glob(os.path.join(root, p), recursive=True)
    return sorted(set(f for f in out if os.path.isfile(f)))


def _load_cases(program, json_path):
    try:
        with open(json_path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and isinstance(data.get("cases"), list):
        for c in data["cases"]:
            if isinstance(c, dict) and "fn" in c and isinstance(c.get("input"), dict):
                program.cases.append((c["fn"], c["input"]))
    elif isinstance(data, dict):
        program.cases.append((None, data))  # for every function whose parameters it names


def collect(root, embedded_dir):
    """The programs under root, files first, then embedded ones written to embedded_dir."""
    programs = {}
    for path in _files(root, ["examples/**/*.cot", "tests/**/*.cot", "bench/**/*.cot",
                              "fuzz/corpus/*"]):
        programs[path] = Program(path, os.path.relpath(path, root))
    # Inputs: X.json beside X.cot, and the end-to-end test's cases for the examples.
    for path, program in programs.items():
        stem = os.path.splitext(path)[0]
        if os.path.exists(stem + ".json"):
            _load_cases(program, stem + ".json")
        name = os.path.basename(stem)
        for extra in glob.glob(os.path.join(root, "tests/e2e/examples", name + ".json")):
            if os.path.relpath(path, root).startswith("examples/"):
                _load_cases(program, extra)

    os.makedirs(embedded_dir, exist_ok=True)
    seen = set()
    sources = [(f, _RAW_STRING, 2) for f in _files(root, ["tests/**/*.cpp", "tests/**/*.h"])]
    sources += [(f, _COT_BLOCK, 1) for f in _files(root, ["docs/*.md", "README.md"])]
    for path, pattern, group in sources:
        with open(path, errors="replace") as f:
            text = f.read()
        for k, m in enumerate(pattern.finditer(text)):
            body = m.group(group)
            if "def " not in body:
                continue
            digest = hashlib.sha1(body.encode()).hexdigest()[:10]
            if digest in seen:
                continue
            seen.add(digest)
            rel = os.path.relpath(path, root)
            line = text.count("\n", 0, m.start()) + 1
            name = re.sub(r"[^A-Za-z0-9]+", "_", os.path.splitext(rel)[0]) + f"_L{line}.cot"
            out = os.path.join(embedded_dir, name)
            with open(out, "w") as f:
                f.write(body)
            programs[out] = Program(out, f"{rel}:{line}")
    return list(programs.values())
