# SPDX-License-Identifier: Apache-2.0
"""Schedules as Python objects: the steps, their JSON (the database's and ``show``'s format),
and what a schedule lowers and compiles to.

>>> from tensortune import te, schedule as s
>>> w = te.workload("matmul:M=64,N=64,K=64")
>>> sched = s.Schedule([s.Tile("C", "i", "j", 8, 16), s.Annotate("C", "j.i", "vectorize")])
>>> print(sched.lower(w))          # the loop IR
>>> text = sched.to_json(); s.Schedule.from_json(text) == sched
True

A schedule never changes what is computed, only how; each step is checked when applied
(ScheduleError naming the step, stage and axis).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, Union

from . import _tensortune as _tt
from .te import WorkloadLike, as_workload

__all__ = [
    "Step", "Split", "Fuse", "Reorder", "Tile", "Annotate", "PragmaUnroll", "ComputeAt",
    "ComputeInline", "ComputeRoot", "CacheWrite", "CacheRead", "Schedule", "Text",
    "ANNOTATIONS",
]

#: The loop kinds an Annotate step sets.
ANNOTATIONS = ("serial", "parallel", "vectorize", "unroll", "blockIdx.x", "blockIdx.y",
               "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


class Text(str):
    """A string that shows as itself in an interactive session (loop IR, LLVM IR, assembly)."""

    def __repr__(self) -> str:
        return str(self)


class Step:
    """One schedule primitive with its arguments; ``to_dict`` gives its JSON object."""

    kind: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """The step as the JSON object the database stores."""
        d: Dict[str, Any] = {"kind": self.kind}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in ("row_pad", "stages") and value == 0:
                continue  # as the C++ side writes it
            d[f.name] = [list(b) for b in value] if f.name == "blocks" else (
                list(value) if isinstance(value, tuple) else value)
        return d

    def __str__(self) -> str:
        return _tt._schedule_text(json.dumps({"version": 1, "workload_key": "",
                                              "steps": [self.to_dict()]})).strip()


@dataclass
class Split(Step):
    """axis -> axis.o, axis.i; ``factor`` is the inner extent (the outer one with ``nparts``)."""
    stage: str
    axis: str
    factor: int
    nparts: bool = False
    kind = "split"


@dataclass
class Fuse(Step):
    """Adjacent axes (outer to inner) -> one axis named "a@b"."""
    stage: str
    axes: Tuple[str, ...]
    kind = "fuse"


@dataclass
class Reorder(Step):
    """The listed axes in this order, in the loop positions they occupied."""
    stage: str
    order: Tuple[str, ...]
    kind = "reorder"


@dataclass
class Tile(Step):
    """Split x and y, then order x.o, y.o, x.i, y.i."""
    stage: str
    x: str
    y: str
    x_factor: int
    y_factor: int
    kind = "tile"


@dataclass
class Annotate(Step):
    """How an axis runs: one of ANNOTATIONS ('parallel', 'vectorize', 'unroll', ...)."""
    stage: str
    axis: str
    annotation: str

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.annotation

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.annotation, "stage": self.stage, "axis": self.axis}


@dataclass
class PragmaUnroll(Step):
    """Unroll loop nests under ``axis`` of at most ``max_step`` iterations."""
    stage: str
    axis: str
    max_step: int
    kind = "pragma_unroll"


@dataclass
class ComputeAt(Step):
    """Compute ``stage`` inside loop ``target_axis`` of its consumer ``target_stage``."""
    stage: str
    target_stage: str
    target_axis: str
    kind = "compute_at"


@dataclass
class ComputeInline(Step):
    """Substitute the stage's body into its consumers."""
    stage: str
    kind = "compute_inline"


@dataclass
class ComputeRoot(Step):
    """Compute the stage in full at the top level."""
    stage: str
    kind = "compute_root"


@dataclass
class CacheWrite(Step):
    """Add stage "<stage>.<scope>" computing into a scratch buffer; blocks: [[dim, factor], ...]."""
    stage: str
    scope: str = "local"
    blocks: Tuple[Tuple[int, ...], ...] = ()
    kind = "cache_write"


@dataclass
class CacheRead(Step):
    """Add stage "<stage>.<scope>" copying tensor ``stage`` for ``readers`` (all when empty);
    ``row_pad`` elements widen its buffer's rows (against shared-memory bank conflicts);
    ``stages`` (2 to 4, 0: the target's default) is a CUDA kernel's pipeline depth for its
    fetches."""
    stage: str
    scope: str = "local"
    readers: Tuple[str, ...] = ()
    blocks: Tuple[Tuple[int, ...], ...] = ()
    row_pad: int = 0
    stages: int = 0
    kind = "cache_read"


_STEP_TYPES: Dict[str, Type[Step]] = {
    t.kind: t for t in (Split, Fuse, Reorder, Tile, PragmaUnroll, ComputeAt, ComputeInline,
                        ComputeRoot, CacheWrite, CacheRead)  # type: ignore[misc]
}


def _step_from_dict(d: Dict[str, Any]) -> Step:
    kind = d["kind"]
    if kind in ANNOTATIONS:
        return Annotate(d["stage"], d["axis"], kind)
    cls = _STEP_TYPES[kind]
    args = {k: v for k, v in d.items() if k != "kind"}
    for name in ("axes", "order", "readers"):
        if name in args:
            args[name] = tuple(args[name])
    if "blocks" in args:
        args["blocks"] = tuple(tuple(b) for b in args["blocks"])
    return cls(**args)


@dataclass
class Schedule:
    """An ordered list of steps for one workload (``workload_key`` may be left empty)."""
    steps: List[Step] = field(default_factory=list)
    workload_key: str = ""

    def to_json(self) -> str:
        """The schedule's JSON, checked and canonical (the format of ``tensortune show``)."""
        raw = json.dumps({"version": 1, "workload_key": self.workload_key,
                          "steps": [s.to_dict() for s in self.steps]})
        return _tt._parse_schedule(raw)

    @classmethod
    def from_json(cls, text: str) -> "Schedule":
        """Parses schedule JSON (a file's text, a record's schedule); UserError on bad input."""
        d = json.loads(_tt._parse_schedule(text))
        return cls([_step_from_dict(s) for s in d["steps"]], d.get("workload_key", ""))

    def __str__(self) -> str:
        return _tt._schedule_text(self.to_json()) or "# the default schedule: no steps\n"

    def lower(self, workload: WorkloadLike, target: str = "native") -> Text:
        """The loop IR this schedule lowers ``workload`` to for ``target``."""
        return show(workload, self, target, "ir")

    def llvm_ir(self, workload: WorkloadLike, target: str = "native") -> Text:
        """The LLVM IR of the kernel (a CPU target)."""
        return show(workload, self, target, "llvm")

    def assembly(self, workload: WorkloadLike, target: str = "native") -> Text:
        """The kernel's assembly (a CPU target)."""
        return show(workload, self, target, "asm")


ScheduleLike = Union[Schedule, str, Sequence[Step], None]


def as_schedule(schedule: ScheduleLike) -> Schedule:
    """A Schedule from a Schedule, its JSON text, a list of steps, or None (the default)."""
    if schedule is None:
        return Schedule()
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str):
        return Schedule.from_json(schedule)
    return Schedule(list(schedule))


def show(workload: WorkloadLike, schedule: ScheduleLike = None, target: str = "native",
         emit: str = "ir") -> Text:
    """What ``tensortune show --emit EMIT`` prints: steps, ir, llvm, asm, cuda or ptx."""
    w = as_workload(workload)
    return Text(_tt._emit(w._w, as_schedule(schedule).to_json(), target, emit))


def lower(workload: WorkloadLike, schedule: ScheduleLike = None, target: str = "native") -> Text:
    """The loop IR of ``workload`` under ``schedule`` (default: no steps) for ``target``."""
    return show(workload, schedule, target, "ir")
