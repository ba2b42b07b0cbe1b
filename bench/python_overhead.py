#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The cost of calling a compiled kernel from Python against calling it from C++, on small
arrays (goal: at most 5 us more per call), and the time `import tensortune` takes.

Each workload is built by tensortune.build (the default schedule: no_zero_shot, no_shipped) and
timed through Kernel.__call__ and through the raw extension object; bench/python_overhead (C++)
builds the same kernel the same way and calls its function pointer. Figures are the fastest of
several batches, in ns per call; "extra" is Python minus C++.

    PYTHONPATH=build-ci/python /usr/bin/python3 bench/python_overhead.py [--build build-ci]
"""

import argparse
import os
import statistics
import subprocess
import sys
import timeit

import numpy as np

import tensortune

SPECS = ["add:M=8,N=8", "matmul:M=16,N=16,K=16", "relu:M=1,N=4"]


def python_ns(call, arrays, number, repeat):
    timer = timeit.Timer(lambda: call(*arrays))
    call(*arrays)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def import_seconds(runs):
    code = ("import time; t = time.perf_counter(); import tensortune; "
            "print(time.perf_counter() - t)")
    env = dict(os.environ)
    times = [float(subprocess.run([sys.executable, "-c", code], check=True, env=env,
                                  capture_output=True, text=True).stdout) for _ in range(runs)]
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build-ci", help="the build folder (default build-ci)")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--import-runs", type=int, default=7)
    args = parser.parse_args()
    native = subprocess.run(
        [os.path.join(args.build, "bench", "python_overhead"), "--calls", str(args.calls),
         "--repeat", str(args.repeat)] + [a for s in SPECS for a in ("--workload", s)],
        check=True, capture_output=True, text=True).stdout
    cpp = {line.split()[0]: float(line.split()[1]) for line in native.splitlines()}
    print(f"{'workload':<26} {'C++ ns':>8} {'Python ns':>10} {'raw ns':>8} {'extra us':>9}")
    worst = 0.0
    for spec in SPECS:
        kernel = tensortune.build(spec, target="native", no_zero_shot=True, no_shipped=True)
        arrays = [np.zeros(shape, dtype) for _, dtype, shape in kernel.inputs + kernel.outputs]
        py = python_ns(kernel, arrays, args.calls, args.repeat)
        raw = python_ns(kernel._kernel, arrays, args.calls, args.repeat)
        extra = (py - cpp[spec]) / 1e3
        worst = max(worst, extra)
        print(f"{spec:<26} {cpp[spec]:>8.1f} {py:>10.1f} {raw:>8.1f} {extra:>9.2f}")
    imported = import_seconds(args.import_runs)
    print(f"most extra per call: {worst:.2f} us (goal <= 5 us): "
          f"{'met' if worst <= 5 else 'MISSED'}")
    print(f"import tensortune: {imported * 1e3:.0f} ms (median of {args.import_runs} processes)")
    return 0 if worst <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
