#!/usr/bin/env python3
"""Replaces the generated blocks of docs/benchmarks.md with the tables the bench/run_*.sh
scripts wrote (make bench runs it last):

    update_docs.py RESULTS_DIR docs/benchmarks.md

Each block sits between `<!-- BEGIN NAME -->` and `<!-- END NAME -->` and is replaced by
RESULTS_DIR/NAME.md; a block whose file is missing is left as it is.
"""

import pathlib
import re
import sys


def main():
    results, doc = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = doc.read_text()
    for name in ("cost_ratios", "intro_scaling", "native", "gradbench", "python_overhead"):
        src = results / f"{name}.md"
        if not src.exists():
            print(f"update_docs: no {src}, block {name} unchanged", file=sys.stderr)
            continue
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        if not pattern.search(text):
            sys.exit(f"update_docs: {doc} has no block {name}")
        body = src.read_text().rstrip("\n") + "\n"
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
        print(f"update_docs: {doc}: block {name} refreshed from {src}", file=sys.stderr)
    doc.write_text(text)


if __name__ == "__main__":
    main()
