#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# PyTorch side of bench/gpu_models.sh: a model scripts/make_models.py exported (ResNet-18 or the
# super-resolution network), rebuilt with the same weights and timed on a CUDA device.
"""Times PyTorch eager (and CUDA-graph captured, where this torch has it) on a CUDA device.

Usage: python3 bench/torch_gpu_model.py DIR --model resnet18|superres [--runs 50] [--warmup 20]
Prints one JSON line: {eager_ms, graph_ms (or null), peak_allocated_bytes, peak_reserved_bytes,
eager_in_use_bytes (the device's total - free after the eager runs), ref_rel_err,
onnx_tensors_loaded of module_tensors: the ONNX file's weights, by name, replace the seeded ones}. Times are medians of --runs calls measured with CUDA events, batch 1, fp32 with
TF32 off, under torch.no_grad(). Exits 2 when torch has no CUDA device.
"""

import argparse
import json
import pathlib
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "scripts"))
import make_models  # noqa: E402  (the modules and their seeds)


def build(folder, name):
    if name == "superres":
        torch.manual_seed(0)  # as make_models.make_superres
        model = make_models.SuperResolutionNet()
    elif name == "resnet18":
        model = make_models.resnet18_module()  # as make_models.make_resnet18
    else:
        sys.exit(f"torch_gpu_model.py: unknown model '{name}' (resnet18, superres)")
    model.eval()
    loaded = load_onnx_weights(model, folder / f"{name}.onnx")
    x = torch.from_numpy(np.load(folder / f"{name}.input.0.npy"))
    ref = np.load(folder / f"{name}.output.0.npy")
    return model, x, ref, loaded


def load_onnx_weights(model, path):
    """The exported model's own tensors, by name, over the seeded ones: the module is then the one
    the ONNX file holds whatever this torch's initializers draw. Returns how many of the module's
    tensors were loaded (0 without the onnx package)."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        return 0
    tensors = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    state = model.state_dict()
    loaded = 0
    for key, value in state.items():
        array = tensors.get(key)
        if array is not None and tuple(array.shape) == tuple(value.shape):
            state[key] = torch.from_numpy(array.copy()).to(value.dtype)
            loaded += 1
    model.load_state_dict(state)
    return loaded


def time_events(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--model", required=True)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_gpu_model.py: this torch has no CUDA device", file=sys.stderr)
        sys.exit(2)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, x, ref, loaded = build(args.dir, args.model)
    model = model.cuda()
    x = x.cuda()
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        out = model(x).cpu().numpy()
        err = float(np.max(np.abs(out - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
        eager = time_events(lambda: model(x), args.warmup, args.runs)
        # The whole device's use after eager runs (before a graph's private pool exists): the
        # context, cuDNN's and cuBLAS's code and workspaces, and the caching allocator's blocks.
        free_bytes, total_bytes = torch.cuda.mem_get_info()
        eager_in_use = total_bytes - free_bytes
        graph_ms = None
        if hasattr(torch.cuda, "CUDAGraph"):
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model(x)
            graph_ms = time_events(graph.replay, args.warmup, args.runs)
    print(json.dumps({
        "model": args.model, "eager_ms": eager, "graph_ms": graph_ms, "runs": args.runs,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        "eager_in_use_bytes": eager_in_use,
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "ref_rel_err": err,
        "onnx_tensors_loaded": loaded, "module_tensors": len(model.state_dict()),
    }))


if __name__ == "__main__":
    main()
