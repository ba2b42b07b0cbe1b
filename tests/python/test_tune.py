# SPDX-License-Identifier: Apache-2.0
"""tune(): a compute declared in Python tuned for a few trials, built from its best record and
checked against NumPy; progress callbacks; Ctrl-C (KeyboardInterrupt) stops after the batch in
flight is saved, and the job resumes from the database."""

import signal

import numpy as np
import pytest

import tensortune
from tensortune import te

from conftest import QUICK


def scaled_matmul():
    A = te.placeholder((32, 32), "float32", "A")
    B = te.placeholder((32, 32), "float32", "B")
    k = te.reduce_axis(32, "k")
    C = te.compute((32, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), "C")
    D = te.compute((32, 32), lambda i, j: C[i, j] * 0.5 + 1.0, "D")
    return te.Workload("scaled_matmul", [A, B], [D])


def test_custom_compute_tuned_then_built(db_path, rng):
    w = scaled_matmul()
    rounds = []
    result = tensortune.tune(w, target="native", trials=8, db=db_path, tuner="xgb",
                             **dict(QUICK, progress=rounds.append))
    task = result.tasks[0]
    assert task.workload_key == w.key and task.trials == 8 and task.ok > 0
    assert task.best is not None and task.best.ok and task.best.seconds > 0
    assert rounds == result.rounds and len(rounds) >= 2
    assert rounds[-1].trials == 8 and rounds[-1].budget == 8
    assert sum(r.ok + r.errors + r.invalid for r in rounds) == 8
    assert result.times.build > 0 and result.times.run > 0
    assert all(r.times.total > 0 for r in result.rounds)

    kernel = tensortune.build(w, target="native", db=db_path)
    assert kernel.source == "record" and kernel.record_id == task.best.id
    a = rng.standard_normal((32, 32), dtype=np.float32)
    b = rng.standard_normal((32, 32), dtype=np.float32)
    d = np.empty((32, 32), np.float32)
    kernel(a, b, d)
    np.testing.assert_allclose(d, (a @ b) * 0.5 + 1.0, rtol=1e-4, atol=1e-4)

    # A finished job measures nothing more.
    again = tensortune.tune(w, target="native", trials=8, db=db_path, **QUICK)
    assert again.tasks[0].resumed == 8 and again.tasks[0].trials == 0


def test_ctrl_c_stops_after_the_batch_and_resumes(db_path):
    spec = "matmul:M=32,N=32,K=16"

    def ctrl_c(round_):
        signal.raise_signal(signal.SIGINT)  # as a Ctrl-C would arrive

    with pytest.raises(KeyboardInterrupt) as stopped:
        tensortune.tune(spec, trials=12, db=db_path, tuner="random",
                        **dict(QUICK, progress=ctrl_c))
    partial = stopped.value.result
    assert partial.interrupted and partial.tasks[0].trials == 4  # one batch, saved
    assert len(tensortune.Database(db_path).history(spec)) == 4
    # Python's own Ctrl-C handling is back, at the C level too.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)

    resumed = tensortune.tune(spec, trials=12, db=db_path, tuner="random", **QUICK)
    assert resumed.tasks[0].resumed == 4 and resumed.tasks[0].trials == 8
    assert not resumed.interrupted
    assert len(tensortune.Database(db_path).history(spec)) == 12


def test_callback_exception_stops_and_propagates(db_path):
    def fail(round_):
        raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        tensortune.tune("matmul:M=16,N=16,K=16", trials=12, db=db_path, tuner="random",
                        **dict(QUICK, progress=fail))
    assert len(tensortune.Database(db_path).history("matmul:M=16,N=16,K=16")) == 4
