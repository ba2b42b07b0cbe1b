# SPDX-License-Identifier: Apache-2.0
"""model.compile(): ONNX models compiled for the host and run on NumPy inputs, checked against
PyTorch's committed outputs (tests/models/, the tolerance of the C++ model tests); profile,
export and load; bad models and bad inputs."""

import json
import os

import numpy as np
import pytest

import tensortune

from conftest import MODELS

MANIFEST = json.loads((MODELS / "models.json").read_text())


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder"])
def test_against_reference_outputs(name):
    entry = MANIFEST[name]
    model = tensortune.model.compile(str(MODELS / entry["file"]), target="native")
    inputs = {i["name"]: np.load(MODELS / i["file"]) for i in entry["inputs"]}
    outputs = model.run(inputs)
    assert list(outputs) == [o["name"] for o in entry["outputs"]]
    for o in entry["outputs"]:
        np.testing.assert_allclose(outputs[o["name"]], np.load(MODELS / o["file"]), atol=1e-4,
                                   rtol=0)
    assert all(f["source"] in ("shipped", "zero-shot", "default")
               for f in model.info["functions"])


def test_profile_export_load(tmp_path):
    model = tensortune.model.compile(str(MODELS / "mlp.onnx"), target="native",
                                     no_zero_shot=True, no_shipped=True)
    x = np.load(MODELS / "mlp.input.0.npy")
    calls = model.profile({"x": x}, runs=3)
    assert len(calls) == len(model.info["functions"]) or len(calls) >= 1
    assert all(c.seconds > 0 for c in calls)
    folder = model.export(str(tmp_path / "mlp"))
    assert sorted(os.listdir(folder)) == ["model.h", "model.json", "model.so", "weights.bin"]
    loaded = tensortune.model.load(folder)
    np.testing.assert_array_equal(loaded.run({"x": x})["y"], model.run({"x": x})["y"])
    assert loaded.inputs[0].name == "x" and loaded.inputs[0].shape == [2, 64]


def test_bad_models_and_inputs(tmp_path):
    with pytest.raises(tensortune.UserError, match="not_onnx.onnx"):
        tensortune.model.compile(str(MODELS / "not_onnx.onnx"))
    with pytest.raises(tensortune.UserError, match="TopK"):
        tensortune.model.compile(str(MODELS / "unsupported.onnx"))
    with pytest.raises(tensortune.UserError, match="missing.onnx"):
        tensortune.model.compile(str(tmp_path / "missing.onnx"))
    with pytest.raises(tensortune.UserError, match="model.json"):
        tensortune.model.load(str(tmp_path))
    model = tensortune.model.compile(str(MODELS / "mlp.onnx"), no_zero_shot=True)
    x = np.load(MODELS / "mlp.input.0.npy")
    with pytest.raises(tensortune.UserError, match="no input 'z'"):
        model.run({"x": x, "z": x})
    with pytest.raises(tensortune.UserError, match="input 'x' is missing"):
        model.run({})
    with pytest.raises(tensortune.UserError, match=r"has shape \[2, 64\]"):
        model.run({"x": x[:1]})
    # Another dtype is converted, as numpy would.
    np.testing.assert_allclose(model.run({"x": x.astype(np.float64)})["y"],
                               model.run({"x": x})["y"])
