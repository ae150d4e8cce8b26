#!/usr/bin/env python3
"""Writes the inputs of the native backend's benchmark: one directory per kernel with a .npy
file per tensor parameter and in.json with the scalars (the same files feed `cotangent bench`
and the hand-written baselines).

    make_inputs.py OUT_DIR
"""
import json
import os
import sys

import numpy as np

# Sizes: large enough that a call takes well over the timer's resolution.
SIZES = {
    "dot": {"n": 1_000_000},
    "matvec": {"m": 2000, "n": 2000},
    "conv": {"h": 512, "w": 512, "p": 5, "q": 5},
    "gmm": {"n": 1000, "d": 10, "K": 25},  # GradBench's gmm 1k, d = 10, K = 25
    "lstm": {"h": 256, "d": 256},
}


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    u = lambda *shape: rng.uniform(-1.0, 1.0, size=shape)
    s = SIZES
    tensors = {
        "dot": {"x": u(s["dot"]["n"]), "y": u(s["dot"]["n"])},
        "matvec": {"A": u(s["matvec"]["m"], s["matvec"]["n"]), "x": u(s["matvec"]["n"]),
                   "b": u(s["matvec"]["m"])},
        "conv": {"img": u(s["conv"]["h"], s["conv"]["w"]), "ker": u(s["conv"]["p"], s["conv"]["q"])},
        "gmm": {},
        "lstm": {},
    }
    g = s["gmm"]
    n, d, K = g["n"], g["d"], g["K"]
    tensors["gmm"] = {"alphas": u(K), "means": u(K, d), "qs": 0.1 * u(K, d),
                      "ls": u(K, d * (d - 1) // 2), "x": u(n, d)}
    h, dx = s["lstm"]["h"], s["lstm"]["d"]
    tensors["lstm"] = {"Wx": 0.1 * u(4, h, dx), "Wh": 0.1 * u(4, h, h), "b": u(4, h), "x": u(dx),
                       "hp": u(h), "cp": u(h)}
    scalars = {"gmm": {"gamma": 1.0, "wm": 0.0}}
    for kernel, ts in tensors.items():
        d_out = os.path.join(out, kernel)
        os.makedirs(d_out, exist_ok=True)
        for name, t in ts.items():
            np.save(os.path.join(d_out, name + ".npy"), np.ascontiguousarray(t, dtype=np.float64))
        with open(os.path.join(d_out, "in.json"), "w") as f:
            json.dump(scalars.get(kernel, {}), f)
        with open(os.path.join(d_out, "args.txt"), "w") as f:
            f.write(" ".join(f"--arg {name}={os.path.join(d_out, name + '.npy')}" for name in ts))


if __name__ == "__main__":
    main()
