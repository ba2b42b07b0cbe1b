#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tunes a matmul from the operator library, builds its best schedule and compares the kernel
with NumPy, in result and in time.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tune_matmul.py [--trials 64]
"""

import argparse
import time

import numpy as np

import tensortune


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--db", default="tuning_logs/python_example.db")
    args = parser.parse_args()
    n = args.size
    spec = f"matmul:M={n},N={n},K={n}"

    result = tensortune.tune(spec, target="native", trials=args.trials, db=args.db)
    task = result.tasks[0]
    print(f"{task.workload}: {task.resumed + task.trials} trials, best "
          f"{task.best_seconds * 1e3:.3f} ms ({task.best_gflops:.1f} GFLOP/s)")
    print(f"time: build {result.times.build:.1f}s, run {result.times.run:.1f}s, "
          f"search {result.times.search:.1f}s over {len(result.rounds)} rounds")

    kernel = tensortune.build(spec, target="native", db=args.db)
    print(f"built from: {kernel.provenance}")
    print(kernel.schedule)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)

    def best_of(f, repeat=20):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            f()
            times.append(time.perf_counter() - start)
        return min(times)

    ours = best_of(lambda: kernel(a, b, c))
    numpy = best_of(lambda: np.matmul(a, b, out=c))
    print(f"tensortune {ours * 1e3:.3f} ms, numpy {numpy * 1e3:.3f} ms: results agree")


if __name__ == "__main__":
    main()
