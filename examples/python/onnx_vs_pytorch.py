#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports a small CNN from PyTorch to ONNX, compiles it with tensortune for this machine, and
compares the outputs and the latency with PyTorch's. Needs python3-torch: without it the script
says so and exits with status 1.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/onnx_vs_pytorch.py [--db PATH]
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import tensortune


def best_of(f, repeat=50):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="a tuning database (default: none)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("onnx_vs_pytorch.py: PyTorch is not installed (apt-get install python3-torch); "
                 "it is needed to build and run the model to compare with")

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).eval()
    x = torch.rand(1, 3, 32, 32) * 2 - 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "net.onnx")
        torch.onnx.export(net, x, path, input_names=["x"], output_names=["y"], opset_version=13)
        model = tensortune.model.compile(path, target="native", db=args.db)
    with torch.no_grad():
        expected = net(x).numpy()
    got = model.run({"x": x.numpy()})["y"]
    print(f"max |tensortune - pytorch| = {np.abs(got - expected).max():.2e}")
    np.testing.assert_allclose(got, expected, atol=1e-4)
    sources = sorted({f["source"] for f in model.info["functions"]})
    ours = best_of(lambda: model.run({"x": x.numpy()}))
    with torch.no_grad():
        theirs = best_of(lambda: net(x))
    print(f"tensortune {ours * 1e3:.3f} ms ({', '.join(sources)} schedules), "
          f"pytorch {theirs * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
