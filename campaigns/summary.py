#!/usr/bin/python3
"""A campaign's summary: its figures as `key: value` lines, on standard output and in a file.

    summary.py NAME RESULTS_DIR KEY=VALUE...

writes RESULTS_DIR/NAME-<UTC time>.txt and copies it to RESULTS_DIR/NAME-latest.txt, so the
figures of every run stay beside the build and the newest is easy to paste into
docs/campaigns.md. Python callers use write_summary directly.
"""
import datetime
import os
import sys


def write_summary(name, results_dir, figures):
    """figures: a list of (key, value) pairs, printed in order."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    lines = [f"campaign: {name}", f"finished: {stamp}"]
    lines += [f"{key}: {value}" for key, value in figures]
    text = "\n".join(lines) + "\n"
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{name}-{stamp}.txt")
    with open(path, "w") as out:
        out.write(text)
    with open(os.path.join(results_dir, f"{name}-latest.txt"), "w") as out:
        out.write(text)
    sys.stdout.write("----- summary -----\n" + text + f"(written to {path})\n")
    sys.stdout.flush()
    return path


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: summary.py NAME RESULTS_DIR KEY=VALUE...\n")
        return 2
    figures = []
    for arg in argv[3:]:
        key, sep, value = arg.partition("=")
        if not sep:
            sys.stderr.write(f"summary.py: `{arg}` is not KEY=VALUE\n")
            return 2
        figures.append((key, value))
    write_summary(argv[1], argv[2], figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
