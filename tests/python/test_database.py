# SPDX-License-Identifier: Apache-2.0
"""Database(): best, history, stats, records as plain objects; export and import."""

import pytest

import tensortune
from tensortune import Database

from conftest import QUICK

SPEC = "matmul:M=16,N=32,K=16"


@pytest.fixture
def tuned(db_path):
    tensortune.tune(SPEC, trials=8, db=db_path, tuner="random", **QUICK)
    return db_path


def test_queries(tuned):
    db = Database(tuned, read_only=True)
    assert len(db) == 8
    history = db.history(SPEC)
    assert len(history) == 8 and all(r.target for r in history)
    best = db.best(SPEC, k=3)
    assert 1 <= len(best) <= 3
    assert best == sorted(best, key=lambda r: r.rank_seconds)
    assert best[0].ok and best[0].seconds > 0
    assert best[0].schedule.to_json()  # the steps as objects
    assert db.best(SPEC, target="native")  # the target as tune() wrote it
    (stats,) = db.stats()
    assert stats.records == 8 and stats.best_gflops > 0
    # One time per record: stats names best's first record with that record's own time.
    assert stats.best_record_id == best[0].id and stats.best_seconds == best[0].seconds
    assert not best[0].confirmed and best[0].seconds == best[0].median_seconds  # confirm=0
    (info,) = db.workloads()
    assert info.spec == "matmul:K=16,M=16,N=32" and info.op == "matmul"
    assert len(db.records()) == 8
    key = tensortune.te.workload(SPEC).key
    assert db.history(key) == history


def test_export_import(tuned, tmp_path):
    lines = Database(tuned).export_jsonl(str(tmp_path / "logs.jsonl"))
    assert lines == 9  # one workload, eight records
    copy = Database(str(tmp_path / "copy.db"))
    summary = copy.import_jsonl(str(tmp_path / "logs.jsonl"))
    assert summary.imported == 8 and summary.workloads == 1
    assert copy.import_jsonl(str(tmp_path / "logs.jsonl")).skipped == 8
    assert sorted(r.schedule_json for r in copy.history(SPEC)) == \
        sorted(r.schedule_json for r in Database(tuned).history(SPEC))


def test_errors(tmp_path):
    bad = tmp_path / "not.db"
    bad.write_text("this is not a database")
    with pytest.raises(tensortune.UserError):
        Database(str(bad))
    with pytest.raises(tensortune.UserError):
        Database(str(tmp_path / "missing.db"), read_only=True)
    empty = tmp_path / "bad.jsonl"
    empty.write_text("{not json\n")
    with pytest.raises(tensortune.UserError, match="nothing was imported"):
        Database(str(tmp_path / "fresh.db")).import_jsonl(str(empty))
