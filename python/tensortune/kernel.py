# SPDX-License-Identifier: Apache-2.0
"""build(): a workload compiled for this machine into a kernel callable on NumPy arrays.

>>> import numpy as np, tensortune
>>> k = tensortune.build("matmul:M=64,N=64,K=64", target="native", db="tuning_logs/tune.db")
>>> a, b = np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)
>>> c = np.empty((64, 64), np.float32)
>>> k(a, b, c)                       # inputs, then outputs, in declaration order
>>> k.export_library("out/mm.so")    # out/mm.so and out/mm.h, as `tensortune compile` writes

The schedule is the database's best record, else (as ``tensortune compile`` falls back) the
nearest record of another shape, a shipped record, a zero-shot schedule or the default one;
``source`` says which.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import _paths
from . import _tensortune as _tt
from .schedule import Schedule, ScheduleLike, Text, as_schedule, show
from .te import Workload, WorkloadLike, as_workload

__all__ = ["build", "Kernel"]


class Kernel:
    """A compiled kernel: ``kernel(*inputs, *outputs)`` with C-contiguous NumPy arrays.

    The arrays are used in place (no copy); their dtypes and shapes must be the workload's, and
    the outputs writable (UserError naming the argument otherwise). The GIL is released while
    the kernel runs, so kernels may run in parallel threads.
    """

    def __init__(self, kernel: Any, workload: Workload, target: str,
                 given: Optional[Schedule] = None) -> None:
        self._kernel = kernel
        self._workload = workload
        self._target = target
        self._given = given  # the schedule build() was given, if any

    def __call__(self, *arrays: Any) -> None:
        self._kernel(*arrays)

    @property
    def name(self) -> str:
        """The function's name."""
        return self._kernel.name

    @property
    def workload(self) -> Workload:
        """The workload it computes."""
        return self._workload

    @property
    def source(self) -> str:
        """Where the schedule came from: record, adapted, shipped, zero-shot, default or given."""
        return self._kernel.source if self._given is None else "given"

    @property
    def provenance(self) -> str:
        """The driver's one-line description of the schedule's origin."""
        return self._kernel.provenance if self._given is None else "the schedule given to build"

    @property
    def record_id(self) -> int:
        """The database record its schedule came from (0 when none)."""
        return self._kernel.record_id

    @property
    def schedule(self) -> Schedule:
        """Its schedule's steps."""
        return Schedule.from_json(self._kernel.schedule_json)

    @property
    def inputs(self) -> List[Tuple[str, str, List[int]]]:
        """(name, dtype, shape) of each input, in order."""
        return [(n, d, s) for n, d, s, out in self._kernel.params if not out]

    @property
    def outputs(self) -> List[Tuple[str, str, List[int]]]:
        """(name, dtype, shape) of each output, in order."""
        return [(n, d, s) for n, d, s, out in self._kernel.params if out]

    def lower(self) -> Text:
        """The loop IR it was compiled from."""
        return Text(self._kernel.ir)

    def llvm_ir(self) -> Text:
        """Its LLVM IR."""
        return show(self._workload, self.schedule, self._target, "llvm")

    def assembly(self) -> Text:
        """Its assembly."""
        return show(self._workload, self.schedule, self._target, "asm")

    def export_library(self, path: str) -> Dict[str, str]:
        """Writes DIR/NAME.so (function NAME) and DIR/NAME.h for ``path`` = DIR/NAME.so, as
        ``tensortune compile --name NAME`` does; returns {library, header, function}."""
        return self._kernel.export_library(str(path), _paths.runtime_archive())

    def __repr__(self) -> str:
        return f"<Kernel {self.name} ({self.source})>"


def build(workload: WorkloadLike, target: str = "native", db: Optional[str] = None,
          schedule: ScheduleLike = None, **options: Any) -> Kernel:
    """Compiles ``workload`` (a te.Workload or a spec) for ``target`` (a CPU) into a Kernel.

    Without ``schedule``: the best record of the database ``db`` (read only), else the CLI's
    fallbacks; keyword options as ``tensortune compile``'s (no_zero_shot=True, no_shipped=True,
    zero_shot_model=PATH). With ``schedule`` (a Schedule, its JSON or a list of steps): exactly
    that schedule.
    """
    w = as_workload(workload)
    opts: Dict[str, Any] = dict(options)
    opts["db"] = db
    given = as_schedule(schedule) if schedule is not None else None
    k = _tt._build(w._w, w.spec, target, opts, given.to_json() if given is not None else "")
    return Kernel(k, w, target, given)
