# SPDX-License-Identifier: Apache-2.0
"""build(): custom computes and specs compiled into kernels called on NumPy arrays (checked
against NumPy), argument checks, and export_library's .so called through ctypes."""

import ctypes
import os
import sys
import threading

import numpy as np
import pytest

import tensortune
from tensortune import schedule as s
from tensortune import te


def softplus_workload():
    X = te.placeholder((32, 24), "float32", "X")
    W = te.placeholder((24, 16), "float32", "W")
    k = te.reduce_axis(24, "k")
    Y = te.compute((32, 16), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), "Y")
    Z = te.compute((32, 16), lambda i, j: te.log(1.0 + te.exp(Y[i, j])), "Z")
    return te.Workload("softplus_mm", [X, W], [Z])


def softplus_reference(x, w):
    return np.log1p(np.exp(x @ w))


def test_custom_compute_against_numpy(rng):
    kernel = tensortune.build(softplus_workload(), target="native")
    x = rng.standard_normal((32, 24), dtype=np.float32)
    w = rng.standard_normal((24, 16), dtype=np.float32) * 0.2
    z = np.empty((32, 16), np.float32)
    kernel(x, w, z)
    np.testing.assert_allclose(z, softplus_reference(x, w), rtol=1e-4, atol=1e-5)
    assert [n for n, _, _ in kernel.inputs] == ["X", "W"]
    assert kernel.outputs == [("Z", "float32", [32, 16])]


def test_given_schedule_and_spec(rng):
    sched = [s.Tile("C", "i", "j", 8, 16), s.Reorder("C", ("k", "i.i", "j.i")),
             s.Annotate("C", "j.i", "vectorize")]
    kernel = tensortune.build("matmul:M=48,N=64,K=40", schedule=sched, no_zero_shot=True)
    assert kernel.source == "given"
    assert kernel.schedule == s.Schedule(sched, kernel.schedule.workload_key)
    a = rng.standard_normal((48, 40), dtype=np.float32)
    b = rng.standard_normal((40, 64), dtype=np.float32)
    c = np.zeros((48, 64), np.float32)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert "for" in kernel.lower() and "define" in kernel.llvm_ir()


def test_argument_checks():
    kernel = tensortune.build("matmul:M=8,N=8,K=8", no_zero_shot=True, no_shipped=True)
    assert kernel.source == "default"
    a = np.ones((8, 8), np.float32)
    c = np.empty((8, 8), np.float32)
    with pytest.raises(tensortune.UserError, match="takes 3 arrays"):
        kernel(a, a)
    with pytest.raises(tensortune.UserError, match="expected float32, got float64"):
        kernel(a, np.ones((8, 8)), c)
    with pytest.raises(tensortune.UserError, match=r"expected the shape \[8, 8\], got \[8, 4\]"):
        kernel(a, a[:, :4].copy(), c)
    with pytest.raises(tensortune.UserError, match="not C-contiguous"):
        kernel(a, np.asfortranarray(np.ones((8, 8), np.float32)), c)
    readonly = np.empty((8, 8), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(tensortune.UserError, match="output 'C'"):
        kernel(a, a, readonly)
    with pytest.raises(tensortune.UserError, match="got a list"):
        kernel(a, [[1.0] * 8] * 8, c)
    kernel(a, a, c)
    assert (c == 8).all()


def test_export_library_matches_the_cli(tmp_path, rng):
    kernel = tensortune.build(softplus_workload(), no_zero_shot=True)
    out = kernel.export_library(str(tmp_path / "softplus.so"))
    assert out["library"].endswith("softplus.so") and os.path.isfile(out["header"])
    header = open(out["header"]).read()
    assert "int32_t softplus(void* const* buffers)" in header.replace("  ", " ")
    lib = ctypes.CDLL(out["library"])
    x = rng.standard_normal((32, 24), dtype=np.float32)
    w = rng.standard_normal((24, 16), dtype=np.float32) * 0.2
    z = np.empty((32, 16), np.float32)
    buffers = (ctypes.c_void_p * 3)(x.ctypes.data, w.ctypes.data, z.ctypes.data)
    assert lib.softplus(buffers) == 0
    np.testing.assert_allclose(z, softplus_reference(x, w), rtol=1e-4, atol=1e-5)
    with pytest.raises(tensortune.UserError, match="DIR/NAME.so"):
        kernel.export_library(str(tmp_path / "softplus.dylib"))


def test_the_gil_is_released_while_a_kernel_runs():
    kernel = tensortune.build("matmul:M=256,N=256,K=256", no_zero_shot=True, no_shipped=True)
    a = np.ones((256, 256), np.float32)
    c = np.empty((256, 256), np.float32)
    running, returned = threading.Event(), threading.Event()
    during = 0

    def call():
        running.set()
        kernel(a, a, c)  # tens of ms; holding the GIL, the main thread could not run meanwhile
        returned.set()

    # Forced switches every second only: shorter calls than that let the main thread run only
    # when the kernel releases the GIL.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    try:
        thread = threading.Thread(target=call)
        thread.start()
        while not returned.is_set():
            if running.is_set():
                during += 1
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert during > 100
    assert (c == 256).all()
