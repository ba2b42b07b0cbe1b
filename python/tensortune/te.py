# SPDX-License-Identifier: Apache-2.0
"""Declaring what to compute, with TVM's names: tensors, computes, reductions and workloads.

>>> from tensortune import te
>>> A = te.placeholder((64, 32), "float32", "A")
>>> B = te.placeholder((32, 48), "float32", "B")
>>> k = te.reduce_axis(32, "k")
>>> C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), "C")
>>> w = te.Workload("my_matmul", [A, B], [C])

A workload can also be named by a spec string, as the command line takes it:
``te.workload("matmul:M=64,N=48,K=32")``; every function that takes a workload takes a spec too.
"""

from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

from . import _tensortune as _tt

#: An expression of a compute body; Python's operators build new ones.
Expr = _tt.Expr
#: An index variable: a compute axis or a reduction axis.
IterVar = _tt.IterVar
#: A placeholder or the output of a compute; ``T[i, j]`` reads an element.
Tensor = _tt.Tensor

ExprLike = Union[Expr, IterVar, int, float, bool]
Axis = Union[IterVar, Sequence[IterVar]]

__all__ = [
    "Expr", "IterVar", "Tensor", "Workload", "placeholder", "compute", "reduce_axis", "sum",
    "max", "min", "prod", "exp", "log", "sqrt", "tanh", "erf", "abs", "pow", "floor", "ceil",
    "select", "cast", "const", "matmul", "batch_matmul", "dense", "bias_add", "relu", "gelu",
    "add", "multiply", "transpose", "pad", "conv2d", "conv2d_winograd", "depthwise_conv2d",
    "pool2d", "softmax", "layer_norm", "workload", "workload_names",
]


class Workload:
    """What to tune and build: the inputs and outputs of a compute DAG, in declaration order.

    ``Workload(name, inputs, outputs, constants=())``: ``constants`` lists the inputs that are
    weights (a kernel may then prepack them). Kernels take the inputs, then the outputs, in the
    order given here. ``Workload.from_spec("matmul:M=64,N=64,K=64")`` (or ``te.workload``) builds
    one from the operator library's spec table, as the command line's ``--workload`` does.
    """

    def __init__(self, name: str, inputs: Sequence[Tensor], outputs: Sequence[Tensor],
                 constants: Sequence[Tensor] = ()) -> None:
        self._w = _tt.Workload(name, list(inputs), list(outputs), list(constants))
        self.spec = ""

    @classmethod
    def from_spec(cls, spec: str) -> "Workload":
        """The workload of a spec string ``NAME:key=value,...``; UserError when malformed."""
        w = cls.__new__(cls)
        w._w = _tt._make_workload(spec)
        w.spec = _tt._canonical_spec(spec)
        return w

    @property
    def name(self) -> str:
        """Its readable name (``matmul_64x64x64_float32`` for a spec)."""
        return self._w.name

    @property
    def key(self) -> str:
        """The stable key its records are stored under."""
        return self._w.key

    @property
    def canonical_text(self) -> str:
        """The canonical text of the compute that the key hashes."""
        return self._w.canonical_text

    @property
    def flops(self) -> float:
        """Floating-point operations of one run."""
        return self._w.flops

    @property
    def inputs(self) -> List[Tensor]:
        """The input tensors, in order."""
        return self._w.inputs

    @property
    def outputs(self) -> List[Tensor]:
        """The output tensors, in order."""
        return self._w.outputs

    @property
    def constants(self) -> List[str]:
        """The names of the inputs that are constants (weights)."""
        return self._w.constants

    def __repr__(self) -> str:
        return f"<Workload {self.key}" + (f" ({self.spec})>" if self.spec else ">")


WorkloadLike = Union[Workload, str]


def as_workload(w: WorkloadLike) -> Workload:
    """``w`` itself, or the workload of the spec string ``w``."""
    if isinstance(w, Workload):
        return w
    if isinstance(w, str):
        return Workload.from_spec(w)
    raise TypeError(f"expected a te.Workload or a workload spec string, got {type(w).__name__}")


def workload(spec: str) -> Workload:
    """The workload of a spec such as ``"matmul:M=1024,N=1024,K=1024"`` (see workload_names)."""
    return Workload.from_spec(spec)


def workload_names() -> List[str]:
    """The operator names workload specs know, sorted."""
    return _tt._workload_names()


def placeholder(shape: Sequence[int], dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` and ``dtype`` ('float32', 'float64', 'int32', ...)."""
    return _tt._placeholder([int(d) for d in shape], dtype, name)


def reduce_axis(extent: Union[int, Tuple[int, int]], name: str = "k") -> IterVar:
    """A reduction axis over [0, extent); TVM's ``(0, extent)`` range is accepted too."""
    if isinstance(extent, tuple):
        if len(extent) != 2 or extent[0] != 0:
            raise _tt.UserError(f"reduce_axis: a range must start at 0, got {extent}")
        extent = extent[1]
    return _tt._reduce_axis(int(extent), name)


def compute(shape: Sequence[int], fcompute: Callable[..., ExprLike], name: str = "compute",
            tag: str = "") -> Tensor:
    """The tensor of ``shape`` whose element at (i, j, ...) is ``fcompute(i, j, ...)``.

    ``fcompute`` takes one index variable per output axis and returns an expression built with
    Python's operators, tensor reads ``A[i, k]`` and this module's functions; a reduction
    (``sum``, ``max``, ...) may only be the whole body.
    """
    return _tt._compute([int(d) for d in shape], fcompute, name, tag, [])


def sum(expr: ExprLike, axis: Axis) -> Expr:  # noqa: A001 - TVM's name
    """The sum of ``expr`` over the reduction axis (or axes) ``axis``."""
    return _tt._reduce("sum", expr, axis)


def prod(expr: ExprLike, axis: Axis) -> Expr:
    """The product of ``expr`` over ``axis``."""
    return _tt._reduce("prod", expr, axis)


def max(expr: ExprLike, other: Optional[ExprLike] = None, axis: Optional[Axis] = None) -> Expr:  # noqa: A001
    """``max(expr, axis=k)``: the maximum over a reduction axis; ``max(a, b)``: element-wise."""
    if axis is not None:
        return _tt._reduce("max", expr, axis)
    if other is None:
        raise _tt.UserError("te.max: give axis=... for a reduction, or two expressions")
    return _tt._max(expr, other)


def min(expr: ExprLike, other: Optional[ExprLike] = None, axis: Optional[Axis] = None) -> Expr:  # noqa: A001
    """``min(expr, axis=k)``: the minimum over a reduction axis; ``min(a, b)``: element-wise."""
    if axis is not None:
        return _tt._reduce("min", expr, axis)
    if other is None:
        raise _tt.UserError("te.min: give axis=... for a reduction, or two expressions")
    return _tt._min(expr, other)


def exp(x: ExprLike) -> Expr:
    """e to the power x."""
    return _tt._exp(x)


def log(x: ExprLike) -> Expr:
    """The natural logarithm."""
    return _tt._log(x)


def sqrt(x: ExprLike) -> Expr:
    """The square root."""
    return _tt._sqrt(x)


def tanh(x: ExprLike) -> Expr:
    """The hyperbolic tangent."""
    return _tt._tanh(x)


def erf(x: ExprLike) -> Expr:
    """The error function."""
    return _tt._erf(x)


def abs(x: ExprLike) -> Expr:  # noqa: A001
    """The absolute value."""
    return _tt._abs(x)


def pow(x: ExprLike, y: ExprLike) -> Expr:  # noqa: A001
    """x to the power y."""
    return _tt._pow(x, y)


def floor(x: ExprLike) -> Expr:
    """Rounded down."""
    return _tt._floor(x)


def ceil(x: ExprLike) -> Expr:
    """Rounded up."""
    return _tt._ceil(x)


def select(cond: ExprLike, true_value: ExprLike, false_value: ExprLike) -> Expr:
    """``true_value`` where ``cond`` holds, else ``false_value`` (both evaluated)."""
    return _tt._select(cond, true_value, false_value)


def cast(dtype: str, x: ExprLike) -> Expr:
    """``x`` converted to ``dtype``."""
    return _tt._cast(dtype, x)


def const(value: Union[int, float], dtype: str = "float32") -> Expr:
    """A constant of ``dtype``."""
    return _tt._const(value, dtype)


def matmul(a: Tensor, b: Tensor, transpose_b: bool = False, name: str = "C") -> Tensor:
    """a[M, K] x b[K, N] (b[N, K] when ``transpose_b``) -> [M, N]."""
    return _tt._matmul(a, b, transpose_b, name)


def batch_matmul(a: Tensor, b: Tensor, transpose_b: bool = False, name: str = "C") -> Tensor:
    """a[B, M, K] x b[B, K, N] -> [B, M, N]."""
    return _tt._batch_matmul(a, b, transpose_b, name)


def dense(data: Tensor, weight: Tensor, name: str = "dense") -> Tensor:
    """data[M, K] x weight[N, K]^T -> [M, N]."""
    return _tt._dense(data, weight, name)


def bias_add(x: Tensor, bias: Tensor, axis: int = 1, name: str = "bias") -> Tensor:
    """x + bias broadcast along ``axis``."""
    return _tt._bias_add(x, bias, axis, name)


def relu(x: Tensor, name: str = "relu") -> Tensor:
    """max(x, 0) element-wise."""
    return _tt._relu(x, name)


def gelu(x: Tensor, name: str = "gelu") -> Tensor:
    """The exact gelu, x * 0.5 * (1 + erf(x / sqrt(2)))."""
    return _tt._gelu(x, name)


def add(a: Tensor, b: Tensor, name: str = "add") -> Tensor:
    """a + b element-wise (same shapes)."""
    return _tt._add(a, b, name)


def multiply(a: Tensor, b: Tensor, name: str = "mul") -> Tensor:
    """a * b element-wise (same shapes)."""
    return _tt._multiply(a, b, name)


def transpose(x: Tensor, perm: Sequence[int], name: str = "T") -> Tensor:
    """The axes of ``x`` permuted: output axis d is input axis perm[d]."""
    return _tt._transpose(x, list(perm), name)


def pad(x: Tensor, before: Sequence[int], after: Sequence[int], value: float = 0.0,
        name: str = "pad") -> Tensor:
    """``x`` padded with ``value``: before[d] elements before and after[d] after dimension d."""
    return _tt._pad(x, list(before), list(after), value, name)


def conv2d(data: Tensor, weight: Tensor, stride: int = 1, padding: int = 0, dilation: int = 1,
           groups: int = 1, layout: str = "NCHW", name: str = "conv") -> Tensor:
    """A 2-D convolution: NCHW data with OIHW weights, or NHWC data with HWIO weights."""
    return _tt._conv2d(data, weight, stride, padding, dilation, groups, layout, name)


def conv2d_winograd(data: Tensor, weight: Tensor, padding: int = 1, tile: int = 4,
                    name: str = "conv") -> Tensor:
    """A 3x3 stride-1 NCHW convolution by Winograd's F(tile x tile, 3 x 3), tile 2 or 4."""
    return _tt._conv2d_winograd(data, weight, padding, tile, name)


def depthwise_conv2d(data: Tensor, weight: Tensor, stride: int = 1, padding: int = 0,
                     dilation: int = 1, name: str = "dwconv") -> Tensor:
    """A depthwise NCHW convolution with weights [C, 1, R, S]."""
    return _tt._depthwise_conv2d(data, weight, stride, padding, dilation, name)


def pool2d(data: Tensor, kind: str = "max", kernel: int = 2, stride: Optional[int] = None,
           padding: int = 0, name: str = "pool") -> Tensor:
    """NCHW max or average pooling over kernel x kernel windows (stride defaults to kernel)."""
    return _tt._pool2d(data, kind, kernel, kernel if stride is None else stride, padding, name)


def softmax(x: Tensor, name: str = "softmax") -> Tensor:
    """Softmax over the last axis."""
    return _tt._softmax(x, name)


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, epsilon: float = 1e-5,
               name: str = "layer_norm") -> Tensor:
    """Layer normalisation over the last axis."""
    return _tt._layer_norm(x, gamma, beta, epsilon, name)

