# SPDX-License-Identifier: Apache-2.0
"""The tuning database (SQLite) from Python: records, workloads and statistics as plain objects,
export and import as JSON lines, as ``tensortune db`` shows and maintains them.

>>> from tensortune import Database
>>> db = Database("tuning_logs/tensortune.db")
>>> for r in db.best("matmul:M=1024,N=1024,K=1024", k=3):
...     print(r.id, r.seconds, r.schedule)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _tensortune as _tt
from .schedule import Schedule
from .te import Workload

__all__ = ["Database", "Record", "WorkloadStats", "WorkloadInfo", "ImportSummary"]


@dataclass(frozen=True)
class Record:
    """One measured trial as stored: its schedule, status and times (seconds per call)."""
    id: int
    workload_key: str
    target: str
    fingerprint: str
    schedule_json: str
    knobs: str
    status: str
    error: str
    repeats: List[float]
    #: The record's one time, as every surface shows it: the confirmed side-by-side median
    #: where a confirmation measured it (``confirmed``), else the stored median.
    seconds: float
    confirmed: bool
    #: The median of its own repeats when it was tuned.
    median_seconds: float
    build_seconds: float
    run_seconds: float
    wall_seconds: float
    seed: int
    tool_version: str
    git_revision: str
    timestamp: int
    run_id: int
    confirmed_seconds: float
    rank_seconds: float
    confirm_error: str

    @classmethod
    def _from(cls, d: Dict[str, Any]) -> "Record":
        d = dict(d)
        d["schedule_json"] = d.pop("schedule")
        return cls(**d)

    @property
    def ok(self) -> bool:
        """True when the trial built, ran and computed the right values."""
        return self.status == "Ok"

    @property
    def schedule(self) -> Schedule:
        """The schedule's steps as objects."""
        return Schedule.from_json(self.schedule_json)


@dataclass(frozen=True)
class WorkloadInfo:
    """A workload as the database stores it."""
    key: str
    name: str
    canonical_text: str
    flops: float
    op: str
    spec: str


@dataclass(frozen=True)
class WorkloadStats:
    """Counts and the best time of one (workload, target)."""
    workload_key: str
    workload: str
    target: str
    fingerprint: str
    records: int
    ok: int
    by_status: Dict[str, int]
    #: The best record's one time (Record.seconds) and GFLOP/s, as `tensortune db stats` shows.
    best_seconds: float
    best_gflops: float
    best_record_id: int
    best_confirmed: bool


@dataclass(frozen=True)
class ImportSummary:
    """What import_jsonl did."""
    workloads: int
    imported: int
    skipped: int = field(default=0)


def workload_key(workload: Any) -> str:
    """The key of a te.Workload, of a spec ("matmul:M=..."), or a key given as it is."""
    if isinstance(workload, Workload):
        return workload.key
    if isinstance(workload, str):
        return Workload.from_spec(workload).key if ":" in workload else workload
    raise TypeError(f"expected a te.Workload, a spec or a key, got {type(workload).__name__}")


class Database:
    """A tuning database file, opened (created unless ``read_only``) and migrated.

    ``target`` arguments select the records of a target string as written ('native',
    'llvm -mcpu=znver4 -cores=2'); None means every target.
    """

    def __init__(self, path: str, read_only: bool = False) -> None:
        self._db = _tt._Database(str(path), read_only)

    @property
    def path(self) -> str:
        """The file."""
        return self._db.path

    def best(self, workload: Any, target: Optional[str] = None, k: int = 1) -> List[Record]:
        """The ``k`` fastest Ok records of ``workload`` per target, fastest first."""
        return [Record._from(r) for r in self._db.best(workload_key(workload), target or "", k)]

    def history(self, workload: Any, target: Optional[str] = None) -> List[Record]:
        """Every record of ``workload``, in the order measured."""
        return [Record._from(r) for r in self._db.history(workload_key(workload), target or "")]

    def records(self) -> List[Record]:
        """Every record, in a stable order."""
        return [Record._from(r) for r in self._db.records()]

    def stats(self) -> List[WorkloadStats]:
        """Per (workload, target) with records: counts by status and the best time."""
        return [WorkloadStats(**s) for s in self._db.stats()]

    def workloads(self) -> List[WorkloadInfo]:
        """Every workload, sorted by key."""
        return [WorkloadInfo(**w) for w in self._db.workloads()]

    def export_jsonl(self, path: str) -> int:
        """Writes every workload and record as sorted JSON lines; returns the number of lines."""
        return self._db.export_jsonl(str(path))

    def import_jsonl(self, path: str) -> ImportSummary:
        """Adds the workloads and records of an export (all or nothing; duplicates skipped)."""
        return ImportSummary(**self._db.import_jsonl(str(path)))

    def __len__(self) -> int:
        return self._db.count()

    def __repr__(self) -> str:
        return f"<Database {self.path}: {len(self)} records>"
