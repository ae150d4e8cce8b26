#!/usr/bin/python3
"""Campaign: a soak of the native compile cache through the command line alone.

    campaigns/cache_soak.py SECONDS [--build DIR] [--results DIR] [--workers N]
                            [--kill-probability P] [--max-kill-delay S] [--seed N]

WORKERS processes at a time run `cotangent run` or `cotangent grad` with --backend native on
functions of a few test programs, at random shapes and optimization levels, all sharing one fresh
COTANGENT_CACHE_DIR, so that they compile, race to publish and load the same objects; a run is
killed with SIGKILL after a random delay with probability P (mid-compile, mid-rename, mid-load,
mid-call). Every run that was not killed must exit 0 and print what the interpreter prints for
the same command (--backend interp, the same level; within ρ ≤ 1e-12 as README.md promises).
After the time is spent, a final pass runs every command once more, one at a time, against the
cache as the soak left it: each must succeed with the right value (a damaged entry must be
rebuilt, never loaded).

The summary counts runs, kills, mismatches, errors, the final pass and what the cache directory
holds at the end. Failures are kept in RESULTS/cache-soak-findings.txt with their commands.
"""
import argparse
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_results  # noqa: E402
import cot_signatures  # noqa: E402
import summary  # noqa: E402
from tally import Tally  # noqa: E402

TOLERANCE = 1e-12
# Programs whose functions the soak runs: small, quick to compile, with loops, reductions and
# derivatives (and so with several derived functions per compiled object).
PROGRAMS = ["examples/quickstart.cot", "tests/e2e/programs/softmax.cot",
            "tests/e2e/programs/rnn.cot", "tests/e2e/programs/conv.cot",
            "tests/e2e/programs/reductions.cot", "tests/e2e/programs/while_loops.cot"]
INPUTS_PER_FUNCTION = 12  # distinct inputs (so shapes) per function: hits and misses both common
RUN_TIMEOUT_S = 600


class Soak(Tally):
    def __init__(self, args, env):
        super().__init__()
        self.args, self.env = args, env
        self.references = {}  # command key -> (rc, stdout) of the interpreter
        self.commands = set()  # commands that ran natively, for the final pass

    def finding(self, text):
        with self.lock:
            self.findings.append(text)
        print(f"cache_soak: FINDING {text}", flush=True)


def make_jobs(root, work, seed):
    """(mode, program, fn, input path) for every function the signature reader understands."""
    rng = random.Random(seed)
    inputs_dir = os.path.join(work, "inputs")
    os.makedirs(inputs_dir, exist_ok=True)
    jobs = []
    for rel in PROGRAMS:
        path = os.path.join(root, rel)
        with open(path) as f:
            fns = cot_signatures.functions(f.read())
        for fn in fns:
            modes = ["run"]
            if fn.result.kind == "scalar" and fn.result.dtype == "f64" and \
                    any(t.is_real() for _, t in fn.params):
                modes.append("grad")
            for k in range(INPUTS_PER_FUNCTION):
                inp = cot_signatures.random_input(fn, rng, max_size=6)
                if inp is None:
                    break
                ipath = os.path.join(inputs_dir, f"{os.path.basename(rel)}_{fn.name}_{k}.json")
                with open(ipath, "w") as f:
                    json.dump(inp, f)
                for mode in modes:
                    jobs.append((mode, path, fn.name, ipath))
    return jobs


def command(cot, job, opt, backend):
    mode, path, fn, ipath = job
    return [cot, mode, path, fn, "--input", ipath, "--opt", str(opt), "--backend", backend,
            "--max-iterations", "1000000"]


def reference(soak, job, opt):
    """The interpreter's (exit code, stdout) for job at opt, computed once."""
    key = (job, opt)
    with soak.lock:
        if key in soak.references:
            return soak.references[key]
    try:
        p = subprocess.run(command(soak.args.cot, job, opt, "interp"), env=soak.env,
                           capture_output=True, text=True, errors="replace", timeout=RUN_TIMEOUT_S)
        answer = (p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired:
        answer = ("timeout", "", "")
    with soak.lock:
        soak.references[key] = answer
    return soak.references[key]


def judge(soak, cmd, ref, rc, out, err, where):
    """Counts and reports one finished native run against the interpreter's answer."""
    ref_rc, ref_out, ref_err = ref
    if rc == ref_rc == 0:
        verdict, detail = compare_results.compare_outputs(ref_out, out, TOLERANCE)
        if verdict == "differ":
            soak.add(f"{where} mismatches")
            soak.finding(f"{where}: {shlex.join(cmd)}: {detail}\n  native: {out.strip()[:500]}"
                         f"\n  interp: {ref_out.strip()[:500]}")
        else:
            soak.add(f"{where} correct")
    elif rc == ref_rc == 1 and err == ref_err:
        soak.add(f"{where} correct")  # the same error as the interpreter
    else:
        soak.add(f"{where} errors")
        soak.finding(f"{where}: {shlex.join(cmd)}: exit {rc} (interpreter: exit {ref_rc})\n"
                     f"  stderr: {err.strip()[-1500:]}")


def worker(soak, jobs, deadline, rng):
    a = soak.args
    while time.time() < deadline:
        job = rng.choice(jobs)
        opt = rng.choice([0, 1, 2])
        ref = reference(soak, job, opt)
        cmd = command(a.cot, job, opt, "native")
        with soak.lock:
            soak.commands.add((job, opt))
        kill_after = rng.uniform(0, a.max_kill_delay) if rng.random() < a.kill_probability else None
        p = subprocess.Popen(cmd, env=soak.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace")
        soak.add("runs")
        try:
            out, err = p.communicate(timeout=kill_after if kill_after is not None else RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            if kill_after is None:
                p.kill()
                p.communicate()
                soak.add("soak errors")
                soak.finding(f"soak: {shlex.join(cmd)}: no answer in {RUN_TIMEOUT_S} s")
                continue
            p.send_signal(signal.SIGKILL)
            p.communicate()
            soak.add("kills")
            continue
        if kill_after is not None:
            soak.add("kills scheduled but the run ended first")
        judge(soak, cmd, ref, p.returncode, out, err, "soak")


def cache_contents(cache):
    """(objects, other files, bytes) in the cache directory, recursively."""
    objects = others = size = 0
    for dirpath, _, files in os.walk(cache):
        for f in files:
            size += os.path.getsize(os.path.join(dirpath, f))
            # An entry is KEY.so; a temporary has a second suffix (KEY.UNIQUE.so, .cpp, .log).
            if f.endswith(".so") and f.count(".") == 1:
                objects += 1
            elif not f.endswith(".cpp") or f.count(".") != 1:
                others += 1
    return objects, others, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seconds", type=float)
    ap.add_argument("--build", default="build")
    ap.add_argument("--results", default=None)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--kill-probability", type=float, default=0.3)
    ap.add_argument("--max-kill-delay", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.results = os.path.abspath(args.results or os.path.join(args.build, "campaigns"))
    args.cot = os.path.abspath(os.path.join(args.build, "cotangent"))
    if not os.access(args.cot, os.X_OK):
        sys.exit(f"cache_soak.py: {args.cot} not found; run make build first")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    args.work = os.path.join(args.results, "cache-soak-work")
    shutil.rmtree(args.work, ignore_errors=True)
    cache = os.path.join(args.work, "cache")
    os.makedirs(cache, mode=0o700)
    env = dict(os.environ, COTANGENT_CACHE_DIR=cache)
    env.pop("COTANGENT_OPT", None)

    start = time.time()
    soak = Soak(args, env)
    jobs = make_jobs(root, args.work, seed)
    print(f"cache_soak: {len(jobs)} commands x 3 levels, {args.workers} workers, "
          f"kill probability {args.kill_probability}, seed {seed}", flush=True)
    deadline = start + args.seconds
    threads = [threading.Thread(target=worker, args=(soak, jobs, deadline, random.Random(seed + k)))
               for k in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    soak_s = time.time() - start
    objects_after_soak, others_after_soak, _ = cache_contents(cache)

    # The final pass: every command that ran, once, on the cache as the soak left it.
    for job, opt in sorted(soak.commands):
        cmd = command(args.cot, job, opt, "native")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace",
                           timeout=RUN_TIMEOUT_S)
        soak.add("final runs")
        judge(soak, cmd, reference(soak, job, opt), p.returncode, p.stdout, p.stderr, "final")
    objects, others, size = cache_contents(cache)

    with open(os.path.join(args.results, "cache-soak-findings.txt"), "w") as f:
        f.write("\n\n".join(soak.findings) + ("\n" if soak.findings else ""))
    s = soak
    figures = [
        ("command", f"campaigns/cache_soak.py {args.seconds:g} --build {args.build} "
                    f"--workers {args.workers} --kill-probability {args.kill_probability} "
                    f"--max-kill-delay {args.max_kill_delay} --seed {seed}"),
        ("duration_s", f"{time.time() - start:.0f} (soak {soak_s:.0f}, final pass "
                       f"{time.time() - start - soak_s:.0f})"),
        ("commands", f"{len(jobs)} (mode x function x input) x 3 levels; "
                     f"{len(soak.commands)} distinct ran"),
        ("runs", s.get("runs")),
        ("kills", f"{s.get('kills')} (SIGKILL while running; "
                  f"{s.get('kills scheduled but the run ended first')} more ended first)"),
        ("completed_correct", s.get("soak correct")),
        ("mismatches", s.get("soak mismatches")),
        ("errors", s.get("soak errors")),
        ("final_pass", f"{s.get('final runs')} runs: {s.get('final correct')} correct, "
                       f"{s.get('final mismatches')} mismatches, {s.get('final errors')} errors"),
        ("cache_after_soak", f"{objects_after_soak} objects, {others_after_soak} other files "
                             f"(temporaries of killed compiles, if any)"),
        ("cache_at_end", f"{objects} objects, {others} other files, {size / 1e6:.1f} MB"),
        ("findings", f"{len(s.findings)}" + (f" (in {os.path.join(args.results, 'cache-soak-findings.txt')})"
                                             if s.findings else "")),
    ]
    summary.write_summary("cache-soak", args.results, figures)
    return 0 if not s.findings else 1


if __name__ == "__main__":
    sys.exit(main())
