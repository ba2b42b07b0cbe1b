# SPDX-License-Identifier: Apache-2.0
"""tensortune: declare tensor computations, tune their schedules, and compile kernels and ONNX
models from Python, over the same library as the ``tensortune`` command line.

>>> import numpy as np, tensortune
>>> from tensortune import te
>>> A = te.placeholder((128, 64), "float32", "A")
>>> B = te.compute((128, 64), lambda i, j: A[i, j] * 2 + 1, "B")
>>> w = te.Workload("affine", [A], [B])
>>> tensortune.tune(w, target="native", trials=16, db="tuning_logs/py.db")
>>> kernel = tensortune.build(w, target="native", db="tuning_logs/py.db")
>>> a = np.random.rand(128, 64).astype(np.float32); b = np.empty_like(a)
>>> kernel(a, b)

Modules: te (declaring computes), schedule (steps, lowering), database (records), model (ONNX).
Errors: UserError (bad input; the CLI's message), ScheduleError, InternalError (a bug).
"""

from __future__ import annotations

from . import _paths, _tensortune
from ._tensortune import Error, InternalError, ScheduleError, UserError
from . import te
from . import schedule
from . import database
from . import model
from .database import Database, Record
from .kernel import Kernel, build
from .schedule import Schedule, lower, show
from .tuner import TuneResult, tune

__version__ = "0.1.0"

_paths.use_installed_data(_tensortune._zero_shot_model_name())

__all__ = [
    "te", "schedule", "database", "model", "tune", "TuneResult", "build", "Kernel", "Database",
    "Record", "Schedule", "lower", "show", "Error", "UserError", "ScheduleError",
    "InternalError",
]
