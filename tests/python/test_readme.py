# SPDX-License-Identifier: Apache-2.0
"""The README's Python quick start, extracted from README.md and run verbatim from the source
tree (as a reader would paste it)."""

import re

from conftest import SOURCE_DIR


def python_snippet():
    text = (SOURCE_DIR / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README.md has exactly one python block, the quick start"
    return blocks[0]


def test_quick_start_is_short_and_runs(monkeypatch, capsys):
    code = python_snippet()
    assert len(code.strip().splitlines()) <= 15
    monkeypatch.chdir(SOURCE_DIR)
    exec(compile(code, "README.md", "exec"), {})
    assert "outputs equal the reference" in capsys.readouterr().out
