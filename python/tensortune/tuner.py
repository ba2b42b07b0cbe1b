# SPDX-License-Identifier: Apache-2.0
"""tune(): the command line's ``tensortune tune`` from Python.

>>> import tensortune
>>> r = tensortune.tune("matmul:M=256,N=256,K=256", target="native", trials=64,
...                     db="tuning_logs/tune.db")
>>> r.tasks[0].best_seconds, r.times.build

Records already in the database count towards ``trials`` and are never measured again, so a
stopped job resumes where it stopped. Ctrl-C stops it after the batch in flight is saved and
raises KeyboardInterrupt (its ``result`` attribute holds what was done).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _paths
from . import _tensortune as _tt
from .database import Record
from .te import Workload, WorkloadLike, as_workload

__all__ = ["tune", "TuneResult", "TaskResult", "Round", "PhaseTimes", "options_help"]


@dataclass(frozen=True)
class PhaseTimes:
    """Seconds spent per phase of the tuning loop."""
    search: float = 0.0
    features: float = 0.0
    training: float = 0.0
    build: float = 0.0
    run: float = 0.0
    database: float = 0.0

    @property
    def total(self) -> float:
        """The sum of the phases."""
        return (self.search + self.features + self.training + self.build + self.run
                + self.database)


@dataclass(frozen=True)
class Round:
    """One measured round (batch), as the progress callback sees it."""
    task: int
    workload: str
    round: int
    trials: int
    budget: int
    measured: int
    task_trials: int
    best_seconds: float
    best_gflops: float
    ok: int
    errors: int
    invalid: int
    elapsed_seconds: float
    times: PhaseTimes

    @classmethod
    def _from(cls, d: Dict[str, Any]) -> "Round":
        d = dict(d)
        d["times"] = PhaseTimes(**d["times"])
        return cls(**d)


@dataclass(frozen=True)
class TaskResult:
    """What one workload got: trials (resumed from the database and measured now), its best."""
    workload: str
    workload_key: str
    spec: str
    weight: float
    resumed: int
    trials: int
    ok: int
    best_seconds: float
    best_gflops: float
    best_record_id: int
    confirmed: int
    refuted: int
    curve: List[Tuple[int, float]]
    best: Optional[Record]


@dataclass(frozen=True)
class TuneResult:
    """The job: per task results, per round accounting, phase times, why it stopped."""
    tasks: List[TaskResult]
    rounds: List[Round]
    times: PhaseTimes
    trials: int
    run_id: int
    wall_seconds: float
    interrupted: bool
    stop_reason: str
    target: str
    db: str

    @property
    def best(self) -> List[Optional[Record]]:
        """Each task's best record (None when nothing worked yet)."""
        return [t.best for t in self.tasks]


def _result(raw: Dict[str, Any]) -> TuneResult:
    tasks = []
    for t in raw["tasks"]:
        t = dict(t)
        t["best"] = Record._from(t["best"]) if t["best"] is not None else None
        t["curve"] = [tuple(c) for c in t["curve"]]
        tasks.append(TaskResult(**t))
    return TuneResult(tasks=tasks, rounds=[Round._from(r) for r in raw["rounds"]],
                      times=PhaseTimes(**raw["times"]), trials=raw["trials"],
                      run_id=raw["run_id"], wall_seconds=raw["wall_seconds"],
                      interrupted=raw["interrupted"], stop_reason=raw["stop_reason"],
                      target=raw["target"], db=raw["db"])


def _task(item: Any) -> Tuple[Any, str, float]:
    weight = 1.0
    if isinstance(item, tuple):
        item, weight = item
    w = as_workload(item)
    return (w._w, w.spec, float(weight))


def tune(workloads: Union[WorkloadLike, Tuple[WorkloadLike, float],
                          Sequence[Union[WorkloadLike, Tuple[WorkloadLike, float]]]],
         target: str = "native", trials: Optional[int] = None, db: Optional[str] = None,
         time_budget: Union[float, str, None] = None, tuner: Optional[str] = None,
         progress: Union[str, bool, Callable[[Round], Any], None] = "auto",
         **options: Any) -> TuneResult:
    """Tunes ``workloads`` for ``target``, storing every measurement in the database ``db``.

    ``workloads``: a te.Workload, a spec string, a (workload, weight) pair, or a list of them;
    the trial budget is shared among them as ``tensortune tune`` shares it. ``trials`` (default
    200; no limit with only ``time_budget``), ``db`` (default tuning_logs/tensortune.db, created),
    ``time_budget`` (seconds, or "90s", "10m", "2h"), ``tuner`` ('xgb', 'xgb-evo', 'random',
    'grid'). ``progress``: 'auto' (the CLI's bar on a terminal, lines otherwise), 'bar', 'lines',
    False for none, or a callable that gets a Round after each batch (raising from it stops the
    job after the batch, and the exception propagates). Other keyword options are the CLI's
    ``tune`` options with ``_`` for ``-`` (seed=1, batch=16, early_stop=64, confirm=0,
    no_zero_shot=True, ...; see options_help()). Raises UserError on bad input, and
    KeyboardInterrupt (with ``.result``) after Ctrl-C once the batch in flight is saved.
    """
    items = workloads if isinstance(workloads, list) else [workloads]
    tasks = [_task(i) for i in items]
    opts: Dict[str, Any] = dict(options)
    opts.update(trials=trials, db=db, tuner=tuner)
    if time_budget is not None:
        opts["time_budget"] = time_budget
    callback = None
    style = "none"
    if callable(progress):
        user = progress
        callback = lambda d: user(Round._from(d))  # noqa: E731
    elif progress is True:
        style = "auto"
    elif progress:
        style = str(progress)
    main = threading.current_thread() is threading.main_thread()
    raw = _tt._tune(tasks, target, opts, callback, style, main, _paths.worker())
    result = _result(raw)
    if raw["signal"]:
        stop = KeyboardInterrupt("tune stopped after saving the batch in flight; "
                                 "call tune() again to resume")
        stop.result = result  # type: ignore[attr-defined]
        raise stop
    return result


def options_help() -> str:
    """The keyword options tune() takes, as the CLI's ``tensortune tune --help`` words them."""
    return _tt._tune_help()
