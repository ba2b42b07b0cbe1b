# SPDX-License-Identifier: Apache-2.0
"""Whole ONNX models: compiled for this machine, run on NumPy arrays, profiled and exported.

>>> import numpy as np, tensortune
>>> m = tensortune.model.compile("tests/models/mlp.onnx", target="native")
>>> y = m.run({"x": np.load("tests/models/mlp.input.0.npy")})["y"]
>>> m.export("out/mlp")              # the folder `tensortune compile-model` writes
>>> tensortune.model.load("out/mlp").run({"x": ...})

Each kernel gets the database's best record, else the fallbacks ``tensortune compile-model``
uses (adapted, shipped and zero-shot schedules, the default one).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

from . import _paths
from . import _tensortune as _tt

__all__ = ["compile", "load", "Model", "TensorSpec", "CallTime"]

_FILES = ("model.so", "model.h", "model.json", "weights.bin")


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: its name, dtype and shape."""
    name: str
    dtype: str
    shape: List[int]


@dataclass(frozen=True)
class CallTime:
    """One kernel call of a profile: its function, its workload, its median seconds."""
    function: str
    workload: str
    seconds: float


class Model:
    """A compiled model folder loaded for running (model.so, model.json, weights.bin)."""

    def __init__(self, folder: str, info: Optional[Dict[str, Any]] = None,
                 owned: Optional[tempfile.TemporaryDirectory] = None) -> None:
        self._loaded = _tt._LoadedModel(folder)
        self._folder = folder
        self._owned = owned  # a compile()'s temporary folder lives as long as the model
        self.info: Dict[str, Any] = info or {}
        self.inputs = [TensorSpec(n, d, list(s)) for n, d, s in self._loaded.inputs]
        self.outputs = [TensorSpec(n, d, list(s)) for n, d, s in self._loaded.outputs]

    def _arrays(self, inputs: Mapping[str, Any]) -> List[np.ndarray]:
        names = [t.name for t in self.inputs]
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise _tt.UserError(f"run: the model has no input '{unknown[0]}' "
                                f"(inputs: {', '.join(names)})")
        missing = [n for n in names if n not in inputs]
        if missing:
            raise _tt.UserError(f"run: input '{missing[0]}' is missing "
                                f"(inputs: {', '.join(names)})")
        arrays = []
        for t in self.inputs:
            a = np.asarray(inputs[t.name])
            if list(a.shape) != t.shape:
                raise _tt.UserError(f"run: input '{t.name}' has shape {t.shape}, "
                                    f"got {list(a.shape)}")
            arrays.append(np.ascontiguousarray(a, dtype=np.dtype(t.dtype)))
        return arrays

    def _outputs(self) -> List[np.ndarray]:
        return [np.empty(t.shape, dtype=np.dtype(t.dtype)) for t in self.outputs]

    def run(self, inputs: Mapping[str, Any]) -> Dict[str, np.ndarray]:
        """Runs the model on ``{input name: array}`` and returns ``{output name: array}``.

        Arrays of the input's dtype and shape, C-contiguous, are used in place; others are
        converted. UserError for a missing or unknown input, or a wrong shape.
        """
        arrays = self._arrays(inputs)
        outputs = self._outputs()
        self._loaded.run(arrays, outputs)
        return {t.name: o for t, o in zip(self.outputs, outputs)}

    def profile(self, inputs: Optional[Mapping[str, Any]] = None,
                runs: int = 10) -> List[CallTime]:
        """Each kernel call's median time over ``runs`` runs, in plan order (inputs default to
        uniform random values in [-1, 1))."""
        if inputs is None:
            rng = np.random.default_rng(0)
            inputs = {t.name: rng.uniform(-1, 1, t.shape).astype(t.dtype) for t in self.inputs}
        calls = self._loaded.profile(self._arrays(inputs), self._outputs(), int(runs))
        return [CallTime(f, w, s) for f, w, s in calls]

    def export(self, folder: str) -> str:
        """Copies the model folder (model.so, model.h, model.json, weights.bin) to ``folder``,
        created when missing; ``tensortune run-model`` and load() read it. Returns ``folder``."""
        os.makedirs(folder, exist_ok=True)
        for name in _FILES:
            shutil.copyfile(os.path.join(self._folder, name), os.path.join(folder, name))
        return str(folder)

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}: {t.dtype}{t.shape}" for t in self.inputs)
        outs = ", ".join(f"{t.name}: {t.dtype}{t.shape}" for t in self.outputs)
        return f"<Model ({ins}) -> ({outs})>"


def compile(path: str, target: str = "native", db: Optional[str] = None,  # noqa: A001
            **options: Any) -> Model:
    """Imports the ONNX model ``path``, builds every kernel for ``target`` with the database
    ``db`` (read only) and loads it. Keyword options as ``tensortune compile-model``'s
    (no_zero_shot=True, no_shipped=True, zero_shot_model=PATH). ``Model.info`` says where each
    kernel's schedule came from. UserError for an unreadable or unsupported model."""
    owned = tempfile.TemporaryDirectory(prefix="tensortune-model-")
    opts: Dict[str, Any] = dict(options)
    opts["db"] = db
    info = _tt._compile_model(str(path), target, opts, owned.name, _paths.runtime_archive())
    return Model(owned.name, info, owned)


def load(folder: str) -> Model:
    """Loads a folder written by Model.export or ``tensortune compile-model``."""
    return Model(str(folder))
