#!/usr/bin/python3
"""The functions of a .cot module and their parameter types, read from the source text, and
random JSON inputs for them (docs/language.md §3: f64/f32/i64/bool scalars, tensors with size
expressions, tuples).

This is a reader for the campaigns, not a parser of the language: it finds each `def NAME(...)
-> T {` and splits the parameter list at top-level commas. A module it misreads only gets
inputs the checker rejects, and the differential run reports those as agreeing errors.
"""
import fractions
import json
import random
import re

_DEF = re.compile(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_SIZE_EXPR = re.compile(r"^[A-Za-z0-9_+\-*/() ]+$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Type:
    """kind: "scalar" (dtype), "tensor" (dtype, dims: size-expression texts) or "tuple"."""

    def __init__(self, kind, dtype=None, dims=(), elems=()):
        self.kind, self.dtype, self.dims, self.elems = kind, dtype, list(dims), list(elems)

    def size_names(self):
        names = set()
        for d in self.dims:
            names.update(_NAME.findall(d))
        for e in self.elems:
            names |= e.size_names()
        return names

    def is_real(self):
        if self.kind == "tuple":
            return all(e.is_real() for e in self.elems)
        return self.dtype in ("f64", "f32")

    def __str__(self):
        if self.kind == "tuple":
            return "(" + ", ".join(map(str, self.elems)) + ")"
        if self.kind == "tensor":
            return f"{self.dtype}[{', '.join(self.dims)}]"
        return self.dtype


class Function:
    def __init__(self, name, params, result):
        self.name, self.params, self.result = name, params, result  # params: [(name, Type)]


def _strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def _split_top(text, sep=","):
    """Splits at `sep` outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def parse_type(text):
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        elems = [parse_type(p) for p in _split_top(t[1:-1])]
        if any(e is None for e in elems):
            return None
        return elems[0] if len(elems) == 1 else Type("tuple", elems=elems)
    m = re.fullmatch(r"(f64|f32|i64|bool)\s*(?:\[(.*)\])?", t, re.S)
    if not m:
        return None
    if m.group(2) is None:
        return Type("scalar", m.group(1))
    dims = [d.strip() for d in _split_top(m.group(2))]
    if not dims or not all(_SIZE_EXPR.match(d) for d in dims):
        return None
    return Type("tensor", m.group(1), dims)


def functions(source):
    """The module's functions whose signature this reader understands, in order."""
    text = _strip_comments(source)
    out = []
    for m in _DEF.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if depth:
            continue
        params_text = text[m.end():i - 1]
        rest = re.match(r"\s*->\s*([^{]*)\{", text[i:])
        if not rest:
            continue
        params = []
        for p in _split_top(params_text):
            name, sep, ty = p.partition(":")
            t = parse_type(ty) if sep else None
            if t is None or not _NAME.fullmatch(name.strip()):
                params = None
                break
            params.append((name.strip(), t))
        result = parse_type(rest.group(1))
        if params is not None and result is not None:
            out.append(Function(m.group(1), params, result))
    return out


def _size_value(expr, sizes):
    """The value of a size expression, exact division required; None when not a size."""
    py = _NAME.sub(lambda m: f"S[{m.group(0)!r}]", expr)
    py = re.sub(r"(\d+)", r"F(\1)", py)
    try:
        v = eval(py, {"__builtins__": {}}, {"S": sizes, "F": fractions.Fraction})
    except (ZeroDivisionError, KeyError, SyntaxError, TypeError):
        return None
    if v.denominator != 1 or v < 0:
        return None
    return int(v)


def _random_scalar(dtype, rng):
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype == "i64":  # mostly valid indices and counts, sometimes just out of range
        return rng.randint(0, 3) if rng.random() < 0.9 else rng.choice([-1, 4])
    return round(rng.uniform(-2.0, 2.0), 6)


def _random_value(t, sizes, rng):
    if t.kind == "tuple":
        return [_random_value(e, sizes, rng) for e in t.elems]
    if t.kind == "scalar":
        return _random_scalar(t.dtype, rng)
    dims = [_size_value(d, sizes) for d in t.dims]

    def build(k):
        if k == len(dims):
            return _random_scalar(t.dtype, rng)
        return [build(k + 1) for _ in range(dims[k])]

    return build(0)


def random_input(fn, rng, max_size=4):
    """A JSON object for fn's parameters: one random value for every size variable (1 to
    max_size, sometimes 0), consistent across parameters; None when no draw gives every
    dimension a non-negative exact value (a size expression this reader cannot satisfy)."""
    names = set()
    for _, t in fn.params:
        names |= t.size_names()
    for _ in range(50):
        sizes = {n: (0 if rng.random() < 0.05 else rng.randint(1, max_size)) for n in sorted(names)}
        ok = True
        for _, t in fn.params:
            stack = [t]
            while stack and ok:
                u = stack.pop()
                stack.extend(u.elems)
                ok = all(_size_value(d, sizes) is not None for d in u.dims)
        if ok:
            return {name: _random_value(t, sizes, rng) for name, t in fn.params}
    return None


if __name__ == "__main__":
    import sys

    for path in sys.argv[1:]:
        with open(path, errors="replace") as f:
            for fn in functions(f.read()):
                sig = ", ".join(f"{n}: {t}" for n, t in fn.params)
                print(f"{path}: {fn.name}({sig}) -> {fn.result}  e.g. "
                      f"{json.dumps(random_input(fn, random.Random(1)))}")
