#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# PyTorch side of bench/resnet18.sh and bench/families.sh: times a model scripts/make_models.py
# exported (ResNet-18 or a family model) eagerly and TorchScript-optimized, and writes its logits
# for the accuracy check.
"""Times PyTorch eager and TorchScript-optimized on a benchmark model's input.

Usage (Debian's Python with torch 1.13 and torchvision; run by bench/resnet18.sh, families.sh):
  /usr/bin/python3 bench/torch_model.py DIR [--model resnet18] [--threads 2] [--runs 20]
                                        [--warmup 10] [--logits FILE.npy]
DIR is the folder written by `scripts/make_models.py --resnet18 DIR` (or `--family DIR`). The
module is rebuilt the way make_models.py builds it (same seed, same randomize_bn) and its output
on DIR's input must match DIR/MODEL.output.0.npy, so PyTorch runs exactly the weights of
MODEL.onnx. Prints one JSON line: {eager_ms, script_ms, runs, threads, omp_wait_policy, ...}.
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


def build_model(folder, name):
    if name == "resnet18":
        torch.manual_seed(0)  # as make_models.make_resnet18
        model = torchvision.models.resnet18(weights=None)
    else:
        families = make_models.family_models()
        if name not in families:
            sys.exit(f"torch_model.py: unknown model '{name}'; known: resnet18 {' '.join(families)}")
        torch.manual_seed(list(families).index(name))  # as make_models.make_families
        model = families[name][0]()
    make_models.randomize_bn(model)
    model.eval()
    x = torch.from_numpy(np.load(folder / f"{name}.input.0.npy"))
    ref = np.load(folder / f"{name}.output.0.npy")
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
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--logits", type=pathlib.Path, help="write the eager logits here")
    args = parser.parse_args()
    if args.runs < 20:
        sys.exit("torch_model.py: --runs must be >= 20")
    torch.set_num_threads(args.threads)
    model, x, ref = build_model(args.dir, args.model)
    with torch.no_grad():
        logits = model(x).numpy()
        err = rel_err(logits, ref)
        if err > 1e-5:
            sys.exit(f"torch_model.py: the rebuilt module does not reproduce "
                     f"{args.dir}/{args.model}.output.0.npy (rel err {err:.3g}); "
                     "re-export it with this torch/torchvision")
        eager = time_ms(model, x, args.warmup, args.runs)
        scripted = torch.jit.optimize_for_inference(torch.jit.script(model))
        script_err = rel_err(scripted(x).numpy(), logits)
        script = time_ms(scripted, x, args.warmup, args.runs)
    if args.logits:
        np.save(args.logits, logits.astype(np.float32))
    print(json.dumps({
        "model": args.model, "eager_ms": eager, "script_ms": script, "runs": args.runs, "warmup": args.warmup,
        "threads": torch.get_num_threads(), "torch": torch.__version__,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "ref_rel_err": err, "script_rel_err": script_err,
    }))


if __name__ == "__main__":
    main()
