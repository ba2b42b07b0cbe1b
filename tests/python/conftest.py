# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python package's tests. CTest runs them with PYTHONPATH set to the
build tree's python/ folder (tests/python/CMakeLists.txt); by hand:
``PYTHONPATH=build-ci/python /usr/bin/python3 -m pytest tests/python``."""

import pathlib

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
MODELS = SOURCE_DIR / "tests" / "models"

# Few trials in small rounds, no final confirmation: the suite tunes on two loaded cores.
QUICK = dict(batch=4, confirm=0, progress=False, timing_budget=0.2, measure_rounds=1)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "tune.db")
