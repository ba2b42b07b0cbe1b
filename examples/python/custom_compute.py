#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A compute declared in Python (a matmul with a bias and a tanh-GELU epilogue), its loop IR
under a hand-written schedule, a short tuning run, and the kernel checked against NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/custom_compute.py [--trials 32]
"""

import argparse
import math

import numpy as np

import tensortune
from tensortune import schedule as s
from tensortune import te


def declare(m, n, k):
    X = te.placeholder((m, k), "float32", "X")
    W = te.placeholder((k, n), "float32", "W")
    bias = te.placeholder((n,), "float32", "bias")
    r = te.reduce_axis(k, "r")
    Y = te.compute((m, n), lambda i, j: te.sum(X[i, r] * W[r, j], axis=r), "Y")
    Z = te.compute((m, n), lambda i, j: 0.5 * (Y[i, j] + bias[j])
                   * (1.0 + te.tanh(0.7978845 * (Y[i, j] + bias[j]))), "Z")
    return te.Workload("mm_bias_gelu", [X, W, bias], [Z])


def reference(x, w, bias):
    y = x @ w + bias
    return 0.5 * y * (1.0 + np.tanh(math.sqrt(2 / math.pi) * y))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--db", default="tuning_logs/python_example.db")
    args = parser.parse_args()
    w = declare(128, 96, 64)
    print(w, f"{w.flops / 1e6:.1f} MFLOP")

    hand = s.Schedule([s.Tile("Y", "i", "j", 8, 16), s.Reorder("Y", ("r", "i.i", "j.i")),
                       s.Annotate("Y", "j.i", "vectorize")])
    print(hand.lower(w))

    tensortune.tune(w, target="native", trials=args.trials, db=args.db)
    kernel = tensortune.build(w, target="native", db=args.db)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 64), dtype=np.float32)
    wt = rng.standard_normal((64, 96), dtype=np.float32) * 0.1
    bias = rng.standard_normal(96, dtype=np.float32)
    z = np.empty((128, 96), np.float32)
    kernel(x, wt, bias, z)
    np.testing.assert_allclose(z, reference(x, wt, bias), rtol=1e-3, atol=1e-4)
    print(f"{kernel.provenance}: matches NumPy")


if __name__ == "__main__":
    main()
