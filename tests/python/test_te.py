# SPDX-License-Identifier: Apache-2.0
"""te from Python: placeholders, computes built with Python's operators, reductions, the
operator library and workload specs."""

import pytest

import tensortune
from tensortune import te


def test_compute_with_python_operators():
    A = te.placeholder((8, 4), "float32", "A")
    B = te.compute((8, 4), lambda i, j: te.max(A[i, j] * 2.0 + 1, 0.0), "B")
    assert B.shape == [8, 4] and B.dtype == "float32" and B.name == "B"
    w = te.Workload("affine_relu", [A], [B])
    assert w.name == "affine_relu"
    assert [t.name for t in w.inputs] == ["A"] and [t.name for t in w.outputs] == ["B"]
    assert "max" in w.canonical_text


def test_reduction_and_flops():
    A = te.placeholder((16, 8), "float32", "A")
    B = te.placeholder((8, 12), "float32", "B")
    k = te.reduce_axis(8, "k")
    C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), "C")
    w = te.Workload("mm", [A, B], [C])
    assert w.flops == 2 * 16 * 12 * 8
    # The key hashes the compute, not the names: the same compute declared again has the same.
    A2 = te.placeholder((16, 8), "float32", "X")
    B2 = te.placeholder((8, 12), "float32", "Y")
    k2 = te.reduce_axis((0, 8), "r")
    C2 = te.compute((16, 12), lambda i, j: te.sum(A2[i, k2] * B2[k2, j], axis=[k2]), "Z")
    assert te.Workload("mm", [A2, B2], [C2]).key == w.key


def test_max_reduction_and_intrinsics():
    A = te.placeholder((4, 6), "float32", "A")
    k = te.reduce_axis(6, "k")
    M = te.compute((4,), lambda i: te.max(te.exp(A[i, k]), axis=k), "M")
    S = te.compute((4, 6), lambda i, j: te.select(A[i, j] > M[i], A[i, j], te.sqrt(M[i])), "S")
    assert "exp" in te.Workload("m", [A], [S]).canonical_text


def test_operator_library_matches_spec():
    A = te.placeholder((64, 32), "float32", "A")
    B = te.placeholder((32, 48), "float32", "B")
    C = te.matmul(A, B)
    assert C.shape == [64, 48]
    spec = te.workload("matmul:M=64,N=48,K=32")
    assert spec.spec == "matmul:K=32,M=64,N=48"
    assert spec.flops == 2 * 64 * 48 * 32
    assert "matmul" in te.workload_names() and "conv2d" in te.workload_names()
    data = te.placeholder((1, 3, 8, 8), "float32", "data")
    weight = te.placeholder((4, 3, 3, 3), "float32", "weight")
    conv = te.conv2d(data, weight, stride=1, padding=1)
    assert conv.shape == [1, 4, 8, 8]
    assert te.pool2d(te.relu(conv), "max", 2).shape == [1, 4, 4, 4]
    assert te.softmax(A).shape == [64, 32]


def test_expressions_print_and_cast():
    A = te.placeholder((4,), "int32", "A")
    e = A[0] + 1
    assert e.dtype == "int32"
    assert e.astype("float32").dtype == "float32"
    assert "A" in str(e)
    with pytest.raises(tensortune.UserError, match="truth value"):
        bool(A[0] < 2)


def test_declaration_errors():
    with pytest.raises(tensortune.UserError):
        te.placeholder((4, 0), "float32", "A")
    with pytest.raises(tensortune.UserError):
        te.placeholder((4,), "float7", "A")
    A = te.placeholder((4, 4), "float32", "A")
    with pytest.raises(tensortune.UserError, match="A"):
        te.compute((4,), lambda i: A[i], "B")  # one index for a 2-D tensor
    with pytest.raises(tensortune.UserError, match="expected an expression"):
        te.compute((4,), lambda i: "text", "B")
    with pytest.raises(tensortune.UserError, match="frobnicate"):
        te.workload("frobnicate:M=4")
    with pytest.raises(tensortune.UserError):
        te.workload("matmul:M=4,N=4")  # K missing
