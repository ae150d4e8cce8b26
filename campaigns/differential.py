#!/usr/bin/python3
"""Campaign: every test program at --opt 0/1/2 x --backend interp/native, compared.

    campaigns/differential.py SECONDS [--build DIR] [--results DIR] [--seed N] [--jobs N]

For each program that `cotangent check` accepts (campaigns/test_programs.py) and each of its
functions, the inputs the repository has and one random input per pass
(campaigns/cot_signatures.py) run through `cotangent run` and, for a function returning a real
scalar with a real parameter, `cotangent grad`, in the six configurations. Every configuration is
compared:

- native code with the interpreter at the same level (README.md: the same errors and the same
  values, to the last bit but in vector lanes, there within ρ ≤ 1e-12): both succeed with every
  real within ρ ≤ 1e-12 (non-finite values, integers and shapes exactly; bit-identical results
  are counted apart), or both fail with the same message;
- the interpreter at --opt 1 and 2 with the interpreter at --opt 0, the reference semantics
  (docs/language.md §9): values within ρ ≤ 1e-12 (docs/design.md §8.3); optimization never
  introduces an error but may remove one that only dead or masked work raises, so an error at
  --opt 0 may become a value or a later error there (counted apart as "error removed");
- a timeout is a disagreement where the other configuration answered within a tenth of the
  timeout (a hang); where both are slow it is counted apart ("slow"), as nothing can be compared;
- anything else (an error only where the reference succeeds, a crash, different messages or exit
  codes) is a disagreement, saved with its program, input and the two commands
  under RESULTS/differential-findings/.

Passes over all programs repeat, with new random inputs, until SECONDS are spent. Native code is
cached in RESULTS/differential-cache, emptied at the start.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_results  # noqa: E402
import cot_signatures  # noqa: E402
import summary  # noqa: E402
from tally import Tally  # noqa: E402
import test_programs  # noqa: E402

TOLERANCE = 1e-12
CONFIGS = [(opt, backend) for opt in (0, 1, 2) for backend in ("interp", "native")]
REFERENCE = (0, "interp")
RUN_TIMEOUT_S = 300
MAX_ITERATIONS = "1000000"  # a random input can make a while loop run long; same in every config


def command(cot, mode, program, fn, input_path, opt, backend):
    return [cot, mode, program, fn, "--input", input_path, "--opt", str(opt), "--backend", backend,
            "--max-iterations", MAX_ITERATIONS]


def run(cmd, env):
    """(exit code or "timeout", stdout, stderr, seconds)."""
    start = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace",
                           timeout=RUN_TIMEOUT_S)
        return p.returncode, p.stdout, p.stderr, time.time() - start
    except subprocess.TimeoutExpired:
        return "timeout", "", f"no answer in {RUN_TIMEOUT_S} s", time.time() - start


def outcome_kind(rc):
    if rc == "timeout":
        return "timeout"
    if rc == 0:
        return "ok"
    if rc in (1, 2):
        return "error"
    return "crash"


def agree(ref, got, across_levels):
    """("exact" | "close" | "same-error" | "error-removed" | "slow" | "differ", detail). Across
    levels, an error of the reference may be gone (docs/language.md §9). A timeout is a finding
    (a hang) only where the other configuration answered in a tenth of the timeout; otherwise
    both are slow on this input (an interpreter at --opt 0 on a large random input) and nothing
    can be compared: "slow", counted apart."""
    (rc_a, out_a, err_a, t_a), (rc_b, out_b, err_b, t_b) = ref, got
    ka, kb = outcome_kind(rc_a), outcome_kind(rc_b)
    if "timeout" in (ka, kb):
        other = t_b if ka == "timeout" else t_a
        if ka == kb or other > RUN_TIMEOUT_S / 10:
            return "slow", ""
        return "differ", f"exit {rc_a} vs exit {rc_b} (the other answered in {other:.1f} s)"
    if ka == "ok" and kb == "ok":
        return compare_results.compare_outputs(out_a, out_b, TOLERANCE)
    if ka == "error" and kb == "error" and rc_a == rc_b and err_a == err_b:
        return "same-error", ""
    if across_levels and rc_a == 1 and (rc_b == 0 or rc_b == 1):
        return "error-removed", ""
    if ka == "error" and kb == "error" and rc_a == rc_b:
        return "differ", "different messages"
    return "differ", f"exit {rc_a} vs exit {rc_b}"


def save_finding(tally, results, program, fn, mode, inp, ref_cmd, ref, cmd, got, detail):
    with tally.lock:
        n = len(tally.findings) + 1
        d = os.path.join(results, "differential-findings", f"{n:04d}")
        tally.findings.append(d)
    os.makedirs(d, exist_ok=True)
    shutil.copy(program.path, os.path.join(d, "program.cot"))
    with open(os.path.join(d, "input.json"), "w") as f:
        json.dump(inp, f)

    def local(c):
        c = list(c)
        c[2], c[5] = "program.cot", "input.json"
        return shlex.join(c)

    with open(os.path.join(d, "README.txt"), "w") as f:
        f.write(f"program: {program.origin}\nfunction: {fn}\nmode: {mode}\n"
                f"disagreement: {detail}\n\n(in this directory)\n"
                f"expected:  {local(ref_cmd)}\n  exit {ref[0]}\n  stdout: {ref[1][:2000]}\n"
                f"  stderr: {ref[2][:2000]}\n"
                f"other:     {local(cmd)}\n  exit {got[0]}\n  stdout: {got[1][:2000]}\n"
                f"  stderr: {got[2][:2000]}\n")
    print(f"differential: DISAGREE {program.origin} {fn} ({mode}): {detail} -> {d}", flush=True)


def check_case(args, tally, env, program, fn, inp, mode, tmpdir):
    fd, input_path = tempfile.mkstemp(prefix="input_", suffix=".json", dir=tmpdir)
    with os.fdopen(fd, "w") as f:
        json.dump(inp, f)
    outcomes = {}
    for opt, backend in CONFIGS:
        cmd = command(args.cot, mode, program.path, fn, input_path, opt, backend)
        outcomes[(opt, backend)] = (cmd, run(cmd, env))
        tally.add("configurations run")
        kind = outcome_kind(outcomes[(opt, backend)][1][0])
        tally.add(f"outcome {kind}")
    tally.add("cases")
    case_ok = True
    for config in CONFIGS:
        if config == REFERENCE:
            continue
        opt, backend = config
        against = (opt, "interp") if backend == "native" else REFERENCE
        ref_cmd, ref = outcomes[against]
        cmd, got = outcomes[config]
        verdict, detail = agree(ref, got, across_levels=against == REFERENCE)
        tally.add(f"comparisons {verdict}")
        if verdict == "differ":
            case_ok = False
            save_finding(tally, args.results, program, fn, mode, inp, ref_cmd, ref, cmd, got,
                         f"--opt {opt} --backend {backend} vs --opt {against[0]} "
                         f"--backend {against[1]}: {detail}")
    tally.add("cases agreeing" if case_ok else "cases disagreeing")
    os.unlink(input_path)


def differentiable(fn):
    return (fn.result.kind == "scalar" and fn.result.dtype == "f64" and
            any(t.is_real() for _, t in fn.params))


def cases_of(program, functions, rng, with_given):
    """(fn, input, origin) for one pass: the repository's inputs (first pass only), then one
    random input per function."""
    by_name = {f.name: f for f in functions}
    out = []
    if with_given:
        for fn, inp in program.cases:
            if fn is not None:
                out.append((by_name.get(fn), fn, inp, "given"))
            else:  # a plain input object: for every function whose parameters it names
                for f in functions:
                    if f.params and {n for n, _ in f.params} == set(inp):
                        out.append((f, f.name, inp, "given"))
    for f in functions:
        inp = cot_signatures.random_input(f, rng)
        if inp is not None:
            out.append((f, f.name, inp, "random"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seconds", type=float)
    ap.add_argument("--build", default="build")
    ap.add_argument("--results", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.results = os.path.abspath(args.results or os.path.join(args.build, "campaigns"))
    args.cot = os.path.abspath(os.path.join(args.build, "cotangent"))
    if not os.access(args.cot, os.X_OK):
        sys.exit(f"differential.py: {args.cot} not found; run make build first")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    start = time.time()
    deadline = start + args.seconds

    work = os.path.join(args.results, "differential-work")
    shutil.rmtree(work, ignore_errors=True)
    cache = os.path.join(args.results, "differential-cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache, mode=0o700)
    os.makedirs(os.path.join(work, "inputs"))
    shutil.rmtree(os.path.join(args.results, "differential-findings"), ignore_errors=True)
    env = dict(os.environ, COTANGENT_CACHE_DIR=cache)
    env.pop("COTANGENT_OPT", None)

    tally = Tally()
    programs = test_programs.collect(root, os.path.join(work, "embedded"))
    def check(p):
        rc, _, err, _ = run([args.cot, "check", p.path], env)
        kind = outcome_kind(rc)
        tally.add(f"programs check {kind}")
        if kind in ("crash", "timeout"):
            tally.findings.append(f"check crashed ({rc}): {args.cot} check {p.path}")
            print(f"differential: CHECK CRASH {p.origin}: exit {rc}\n{err[-2000:]}", flush=True)
        if rc != 0:
            return None
        with open(p.path, errors="replace") as f:
            fns = cot_signatures.functions(f.read())
        return (p, fns) if fns else None

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        checked = [c for c in pool.map(check, programs) if c is not None]
    n_functions = sum(len(fns) for _, fns in checked)
    print(f"differential: {len(programs)} programs, {len(checked)} check with functions, "
          f"{n_functions} functions; seed {seed}", flush=True)

    passes, complete = 0, False
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        while time.time() < deadline:
            passes += 1
            order = list(checked)
            rng.shuffle(order)  # a pass cut short by the time still samples every kind
            jobs = []
            for program, fns in order:
                for fn, name, inp, origin in cases_of(program, fns, rng, passes == 1):
                    modes = ["run"] + (["grad"] if fn is not None and differentiable(fn) else [])
                    for mode in modes:
                        jobs.append((program, name, inp, mode, origin))

            def work_one(job):
                if time.time() >= deadline:
                    return False
                program, name, inp, mode, origin = job
                tally.add(f"{origin} inputs ({mode})")
                check_case(args, tally, env, program, name, inp, mode, os.path.join(work, "inputs"))
                return True

            done = sum(pool.map(work_one, jobs))
            complete = done == len(jobs)
            print(f"differential: pass {passes}: {done} of {len(jobs)} cases"
                  f"{'' if complete else ' (time ran out)'}", flush=True)
            if not complete:
                break

    t = tally
    figures = [
        ("command", f"campaigns/differential.py {args.seconds:g} --build {args.build} "
                    f"--seed {seed} --jobs {args.jobs}"),
        ("duration_s", f"{time.time() - start:.0f}"),
        ("programs", f"{len(programs)} found; check: {t.get('programs check ok')} accepted, "
                     f"{t.get('programs check error')} rejected, "
                     f"{t.get('programs check crash') + t.get('programs check timeout')} crashed"),
        ("functions", f"{n_functions} in {len(checked)} programs"),
        ("passes", f"{passes} (the last one {'complete' if complete else 'cut by the time'})"),
        ("cases", f"{t.get('cases')} (function x input x mode run/grad; given inputs: "
                  f"{t.get('given inputs (run)')} run + {t.get('given inputs (grad)')} grad, "
                  f"random: {t.get('random inputs (run)')} run + "
                  f"{t.get('random inputs (grad)')} grad)"),
        ("configurations_run", f"{t.get('configurations run')} (ok {t.get('outcome ok')}, "
                               f"error {t.get('outcome error')}, crash {t.get('outcome crash')}, "
                               f"timeout {t.get('outcome timeout')})"),
        ("comparisons",
         f"{t.get('comparisons exact')} bit-identical, {t.get('comparisons close')} within "
         f"rho <= {TOLERANCE:g}, {t.get('comparisons same-error')} same error, "
         f"{t.get('comparisons error-removed')} error of --opt 0 removed by the optimizer, "
         f"{t.get('comparisons slow')} slow (a timeout beside another slow run), "
         f"{t.get('comparisons differ')} differ (five per case: native vs interp at each "
         f"level, interp at --opt 1 and 2 vs --opt 0)"),
        ("cases_agreeing", t.get("cases agreeing")),
        ("cases_disagreeing", t.get("cases disagreeing")),
        ("findings", f"{len(t.findings)}" + (f" (first: {t.findings[0]}; all under "
                                              f"{os.path.join(args.results, 'differential-findings')})"
                                              if t.findings else "")),
    ]
    summary.write_summary("differential", args.results, figures)
    return 0 if not t.findings else 1


if __name__ == "__main__":
    sys.exit(main())
