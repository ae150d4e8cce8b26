#!/usr/bin/python3
"""Comparing the outputs of two runs of `cotangent run`/`grad` (JSON as README.md describes it:
numbers, nested arrays, "inf"/"-inf"/"nan" for non-finite reals).

Reals are compared with ρ(x, y) = |x − y| / max(1, |x| + |y|) (docs/design.md §13); non-finite
values must match exactly; integers, booleans and the structure must be equal.
"""
import json
import math

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def rho(x, y):
    return abs(x - y) / max(1.0, abs(x) + abs(y))


def max_rho(a, b, path="result"):
    """The largest ρ between the reals of a and b (0.0 when bit-identical), or a string saying
    where they differ in structure, type or a non-finite value."""
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            return f"{path}: keys {sorted(a)} vs {sorted(b)}"
        worst = 0.0
        for k in a:
            r = max_rho(a[k], b[k], f"{path}.{k}")
            if isinstance(r, str):
                return r
            worst = max(worst, r)
        return worst
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} elements vs {len(b)}"
        worst = 0.0
        for i, (x, y) in enumerate(zip(a, b)):
            r = max_rho(x, y, f"{path}[{i}]")
            if isinstance(r, str):
                return r
            worst = max(worst, r)
        return worst
    if isinstance(a, bool) or isinstance(b, bool):
        return 0.0 if a is b else f"{path}: {json.dumps(a)} vs {json.dumps(b)}"
    if isinstance(a, str) or isinstance(b, str):
        def value(v):  # "inf", "-inf", "nan" as floats; any other value as itself
            return _NONFINITE.get(v, v) if isinstance(v, str) else v
        x, y = value(a), value(b)
        same = (x == y if isinstance(x, str) and isinstance(y, str) else
                isinstance(x, float) and isinstance(y, float) and
                (x == y or (math.isnan(x) and math.isnan(y))))
        return 0.0 if same else f"{path}: {json.dumps(a)} vs {json.dumps(b)}"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return 0.0 if a == b else f"{path}: {a} vs {b}"
        return 0.0 if float(a) == float(b) else rho(float(a), float(b))
    return f"{path}: {json.dumps(a)} vs {json.dumps(b)}"


def compare_outputs(text_a, text_b, tolerance):
    """("exact" | "close" | "differ", detail) for two runs' standard outputs."""
    try:
        a, b = json.loads(text_a), json.loads(text_b)
    except ValueError as e:
        return "differ", f"output is not JSON: {e}"
    r = max_rho(a, b)
    if isinstance(r, str):
        return "differ", r
    if r == 0.0:
        return "exact", ""
    if r <= tolerance:
        return "close", f"max rho {r:.3g}"
    return "differ", f"max rho {r:.3g} > {tolerance:g}"
