#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# PyTorch side of bench/resnet18.sh: times ResNet-18 (the module scripts/make_models.py exported)
# eagerly and TorchScript-optimized, and writes its logits for the accuracy check.
"""Times PyTorch eager and TorchScript-optimized ResNet-18 on the benchmark's input.

Usage (Debian's Python with torch 1.13 and torchvision; run by bench/resnet18.sh):
  /usr/bin/python3 bench/resnet18_torch.py DIR [--threads 2] [--runs 20] [--warmup 10]
                                              [--logits FILE.npy]
DIR is the folder written by `scripts/make_models.py --resnet18 DIR`. The module is rebuilt the
way make_models.py builds it (same seed, same randomize_bn) and its output on DIR's input must
match DIR/resnet18.output.0.npy, so PyTorch runs exactly the weights of resnet18.onnx. Prints
one JSON line: {eager_ms, script_ms, runs, threads, omp_wait_policy, ref_rel_err, ...}.
Timing: median of --runs calls after --warmup calls, batch 1, under torch.no_grad().
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"))
import make_models  # noqa: E402  (randomize_bn: the same BatchNorm statistics as the export)


def rel_err(a, b):
    """max |a - b| / max |b|: the error relative to the logits' scale."""
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))


def build_model(folder):
    torch.manual_seed(0)  # as make_models.make_resnet18
    model = torchvision.models.resnet18(weights=None)
    make_models.randomize_bn(model)
    model.eval()
    x = torch.from_numpy(np.load(folder / "resnet18.input.0.npy"))
    ref = np.load(folder / "resnet18.output.0.npy")
    return model, x, ref


def time_ms(fn, x, warmup, runs):
    for _ in range(warmup):
        fn(x)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--logits", type=pathlib.Path, help="write the eager logits here")
    args = parser.parse_args()
    if args.runs < 20:
        sys.exit("resnet18_torch.py: --runs must be >= 20")
    torch.set_num_threads(args.threads)
    model, x, ref = build_model(args.dir)
    with torch.no_grad():
        logits = model(x).numpy()
        err = rel_err(logits, ref)
        if err > 1e-5:
            sys.exit(f"resnet18_torch.py: the rebuilt module does not reproduce "
                     f"{args.dir}/resnet18.output.0.npy (rel err {err:.3g}); "
                     "re-export it with this torch/torchvision")
        eager = time_ms(model, x, args.warmup, args.runs)
        scripted = torch.jit.optimize_for_inference(torch.jit.script(model))
        script_err = rel_err(scripted(x).numpy(), logits)
        script = time_ms(scripted, x, args.warmup, args.runs)
    if args.logits:
        np.save(args.logits, logits.astype(np.float32))
    print(json.dumps({
        "eager_ms": eager, "script_ms": script, "runs": args.runs, "warmup": args.warmup,
        "threads": torch.get_num_threads(), "torch": torch.__version__,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "ref_rel_err": err, "script_rel_err": script_err,
    }))


if __name__ == "__main__":
    main()
