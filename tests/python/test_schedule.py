# SPDX-License-Identifier: Apache-2.0
"""Schedules as Python objects: JSON both ways, lowering to loop IR, LLVM IR and assembly."""

import json

import pytest

import tensortune
from tensortune import schedule as s
from tensortune import te

W = "matmul:M=64,N=64,K=64"


def tiled():
    return s.Schedule([s.Tile("C", "i", "j", 8, 16), s.Reorder("C", ("k", "i.i", "j.i")),
                       s.Annotate("C", "j.i", "vectorize"), s.Annotate("C", "i.o", "parallel")])


def test_json_round_trip():
    sched = tiled()
    text = sched.to_json()
    assert json.loads(text)["steps"][0]["kind"] == "tile"
    assert s.Schedule.from_json(text) == sched
    assert "vectorize" in str(sched)
    every = s.Schedule([s.Split("C", "i", 8), s.Fuse("C", ("i.o", "i.i")),
                        s.CacheWrite("C", "local"), s.PragmaUnroll("C", "j", 16),
                        s.ComputeInline("X"), s.ComputeRoot("X"), s.ComputeAt("X", "C", "i"),
                        s.CacheRead("A", "local", ("C",), ((1, 8),)),
                        s.CacheRead("B", "shared", ("C",), row_pad=4, stages=3)])
    assert s.Schedule.from_json(every.to_json()) == every
    # row_pad and stages go to the C++ side and back; 0 is left out, as the C++ side writes it.
    assert "row_pad 4 stages 3" in str(s.CacheRead("B", "shared", ("C",), row_pad=4, stages=3))
    assert "row_pad" not in s.CacheRead("B").to_dict()
    assert "stages" not in s.CacheRead("B").to_dict()


def test_lower_llvm_and_assembly():
    ir = tiled().lower(W)
    assert "for" in ir and "parallel" in ir
    assert "define" in tiled().llvm_ir(W)
    assert len(tiled().assembly(W)) > 0
    assert "for" in tensortune.lower(te.workload(W))  # the default schedule
    assert tensortune.show(W, tiled(), emit="steps").startswith("tile")


def test_schedule_errors():
    with pytest.raises(tensortune.ScheduleError, match="nope"):
        s.Schedule([s.Split("C", "nope", 4)]).lower(W)
    with pytest.raises(tensortune.UserError, match="factor"):
        s.Schedule.from_json('{"version": 1, "workload_key": "", "steps": '
                             '[{"kind": "split", "stage": "C", "axis": "i", "factor": "x", '
                             '"nparts": false}]}')
    with pytest.raises(tensortune.UserError):
        s.Schedule([s.Annotate("C", "i", "sideways")]).to_json()
