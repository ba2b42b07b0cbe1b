# SPDX-License-Identifier: Apache-2.0
"""Files that travel with the package: the measurement worker and the runtime archive."""

from __future__ import annotations

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def worker() -> str:
    """The package's tensortune-worker, unless TT_WORKER names one ("" = the library's search)."""
    path = os.path.join(_HERE, "tensortune-worker")
    if os.environ.get("TT_WORKER") or not os.access(path, os.X_OK):
        return ""
    return path


def runtime_archive() -> str:
    """TT_RUNTIME_ARCHIVE when set, else the package's libtt_runtime.a ("" = the library's)."""
    env = os.environ.get("TT_RUNTIME_ARCHIVE", "")
    if env:
        return env
    path = os.path.join(_HERE, "libtt_runtime.a")
    return path if os.path.isfile(path) else ""


def use_installed_data(zero_shot_model_name: str) -> None:
    """An installed package carries the shipped zero-shot model and tuning logs in data/: the
    library finds them through TT_ZERO_SHOT_MODEL and TT_SHIPPED_LOGS unless those are set. (A
    package in the build tree has no data/: the library finds the source tree's.)"""
    model = os.path.join(_HERE, "data", "zero_shot", zero_shot_model_name)
    logs = os.path.join(_HERE, "data", "shipped", "cpu.db")
    if os.path.isfile(model):
        os.environ.setdefault("TT_ZERO_SHOT_MODEL", model)
    if os.path.isfile(logs):
        os.environ.setdefault("TT_SHIPPED_LOGS", logs)
