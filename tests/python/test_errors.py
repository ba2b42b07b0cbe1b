# SPDX-License-Identifier: Apache-2.0
"""Errors as Python exceptions with the command line's messages, and the package's surface."""

import inspect

import pytest

import tensortune
from tensortune import te


def test_hierarchy():
    assert issubclass(tensortune.UserError, tensortune.Error)
    assert issubclass(tensortune.ScheduleError, tensortune.UserError)
    assert issubclass(tensortune.InternalError, tensortune.Error)
    assert not issubclass(tensortune.InternalError, tensortune.UserError)


def test_cli_messages():
    # The same words `tensortune compile --target 'llvm -mcpu'` prints after "error: ".
    with pytest.raises(tensortune.UserError, match="target"):
        tensortune.build("matmul:M=8,N=8,K=8", target="nonsense")
    with pytest.raises(tensortune.UserError, match="--time-budget: expected a positive duration"):
        tensortune.tune("matmul:M=8,N=8,K=8", time_budget="soon", progress=False)
    with pytest.raises(tensortune.UserError, match="unknown option '--colour'"):
        tensortune.tune("matmul:M=8,N=8,K=8", colour="red", progress=False)
    with pytest.raises(tensortune.UserError, match="does not exist"):
        tensortune.model.compile("tests/models/mlp.onnx", db="/nonexistent/x.db")


def test_every_public_name_has_a_docstring():
    modules = [tensortune, te, tensortune.schedule, tensortune.database, tensortune.model]
    for module in modules:
        assert module.__doc__, module.__name__
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                assert obj.__doc__, f"{module.__name__}.{name}"
