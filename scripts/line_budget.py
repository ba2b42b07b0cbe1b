#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The file-size budget of docs/style.md section 3: any .h/.cpp/.py file over 600 lines fails
# unless it is on the allow-list below with a reason; files over the 400-line soft limit are
# listed. Prints a per-module line table (like tinygrad's sz.py) so growth shows in review.
"""Checks the line budget and prints lines per module."""

import argparse
import pathlib
import sys

HARD_LIMIT = 600
SOFT_LIMIT = 400
FOLDERS = ("include", "src", "tools", "tests", "bench", "scripts")
SUFFIXES = {".h", ".cpp", ".py"}

# Path (relative to the repository root) -> why it may exceed HARD_LIMIT. Keep this short.
ALLOW = {
}


def count_lines(path):
    with path.open("rb") as f:
        return sum(1 for _ in f)


def group_of(rel):
    """The row of the table a file counts towards: its module for include/ and src/, the test
    folder for tests/, else the top folder."""
    parts = rel.parts
    if parts[0] == "include" and len(parts) > 3 and parts[1] == "tensortune":
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "tests" and parts[1] == "unit" and len(parts) > 3:
        return f"tests/unit/{parts[2]}"
    if parts[0] == "tests" and len(parts) > 2:
        return f"tests/{parts[1]}"
    return parts[0]


def collect(root):
    files = []
    for folder in FOLDERS:
        base = root / folder
        if base.is_dir():
            for path in sorted(base.rglob("*")):
                if path.is_file() and path.suffix in SUFFIXES:
                    files.append((path.relative_to(root), count_lines(path)))
    return files


def print_table(files):
    rows = {}
    for rel, lines in files:
        row = rows.setdefault(group_of(rel), [0, 0, 0, ""])
        row[0] += 1
        row[1] += lines
        if lines > row[2]:
            row[2], row[3] = lines, rel.name
    width = max([len(name) for name in rows] + [len("module")])
    print(f"{'module':<{width}}  {'files':>5}  {'lines':>6}  largest file")
    for name in sorted(rows):
        count, total, largest, largest_name = rows[name]
        print(f"{name:<{width}}  {count:>5}  {total:>6}  {largest_name} ({largest})")
    total = sum(lines for _, lines in files)
    print(f"{'total':<{width}}  {len(files):>5}  {total:>6}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    default_root = pathlib.Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=pathlib.Path, default=default_root,
                        help="repository root (default: the parent of scripts/)")
    root = parser.parse_args().root.resolve()
    files = collect(root)
    print_table(files)

    soft = [(rel, n) for rel, n in files if SOFT_LIMIT < n <= HARD_LIMIT]
    if soft:
        print(f"\nover the soft limit of {SOFT_LIMIT} lines (consider splitting):")
        for rel, lines in soft:
            print(f"  {rel}: {lines}")
    present = {rel.as_posix(): n for rel, n in files}
    for path, reason in sorted(ALLOW.items()):
        if present.get(path, 0) <= HARD_LIMIT:
            print(f"note: allow-list entry '{path}' ({reason}) is no longer needed; remove it")
    errors = [(rel, n) for rel, n in files if n > HARD_LIMIT and rel.as_posix() not in ALLOW]
    for rel, lines in errors:
        print(f"{rel}: {lines} lines, over the hard limit of {HARD_LIMIT} "
              f"(split it, or add it to ALLOW in scripts/line_budget.py with a reason)")
    if errors:
        print(f"line_budget: {len(errors)} file(s) over {HARD_LIMIT} lines")
        return 1
    print(f"line_budget: OK ({len(files)} files, none over {HARD_LIMIT} lines unless allowed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
