#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The documentation check of docs/style.md section 8: no lab-notebook "session N" phrases in docs
# or code, ARCHITECTURE.md and README.md within their line budgets, and every relative markdown
# link pointing at a file that exists. Usage: check_docs.py [--root REPO]. Exit status 1 on any
# failure, each printed as file:line: message.
"""Checks the documents: no session numbers, line budgets, no dangling relative links."""

import argparse
import pathlib
import re
import subprocess
import sys

# Files whose text is checked for session numbers (by suffix, or by exact name).
SUFFIXES = {".md", ".cpp", ".h", ".py", ".sh", ".cmake"}
NAMES = {"CMakeLists.txt"}
SESSION = re.compile(r"\bsessions? \d+", re.IGNORECASE)

# Path -> the most lines it may have.
BUDGETS = {"ARCHITECTURE.md": 300, "README.md": 100}

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
EXTERNAL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|//)")  # http:, https:, mailto:, ...


def skipped(rel):
    """Build folders and hidden folders (.git, .devpack, ...) are never checked."""
    return any(part.startswith(".") or part.startswith("build") for part in rel.parts[:-1])


def git_files(root):
    """Tracked and untracked-but-not-ignored files, or None when git cannot list them."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = sorted({name for name in out.decode("utf-8", "replace").split("\0") if name})
    return [pathlib.Path(name) for name in names]


def walked_files(root):
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def checked_files(root):
    """Relative paths of the existing files to check, in a stable order."""
    files = git_files(root)
    if files is None:
        files = walked_files(root)
    return [rel for rel in files
            if (rel.suffix in SUFFIXES or rel.name in NAMES) and not skipped(rel)
            and (root / rel).is_file()]


def read_lines(path):
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def check_sessions(rel, lines, errors):
    for number, line in enumerate(lines, 1):
        match = SESSION.search(line)
        if match:
            errors.append(f"{rel}:{number}: '{match.group(0)}': history belongs in commit "
                          f"messages, figures in bench/RESULTS.md")


def check_budget(root, rel, lines, errors):
    limit = BUDGETS.get(rel.as_posix())
    if limit is not None and len(lines) > limit:
        errors.append(f"{rel}:{limit + 1}: {len(lines)} lines, over the budget of {limit}")


def link_targets(lines):
    """Yields (line number, target) of every markdown link outside code blocks and code spans."""
    in_fence = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        text = INLINE_CODE.sub("", line)
        for match in INLINE_LINK.finditer(text):
            yield number, match.group(1)
        match = REFERENCE_LINK.match(text)
        if match:
            yield number, match.group(1)


def check_links(root, rel, lines, errors):
    """Counts the relative links of one markdown file; appends those whose target is missing."""
    count = 0
    for number, target in link_targets(lines):
        target = target.strip("<>")
        if not target or target.startswith("#") or EXTERNAL.match(target):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        if not path:
            continue
        count += 1
        base = root if path.startswith("/") else (root / rel).parent
        if not (base / path.lstrip("/")).exists():
            errors.append(f"{rel}:{number}: link to '{target}', which does not exist")
    return count


def sort_key(error):
    """Orders errors by file, then by line number."""
    where = error.split(": ", 1)[0]
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else (where, 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    default_root = pathlib.Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=pathlib.Path, default=default_root,
                        help="repository root (default: the parent of scripts/)")
    root = parser.parse_args().root.resolve()
    errors = []
    files = checked_files(root)
    documents = links = 0
    for rel in files:
        lines = read_lines(root / rel)
        check_sessions(rel, lines, errors)
        if rel.suffix == ".md":
            documents += 1
            check_budget(root, rel, lines, errors)
            links += check_links(root, rel, lines, errors)
    for name in BUDGETS:
        if not (root / name).is_file():
            errors.append(f"{name}:1: missing")
    for error in sorted(errors, key=sort_key):
        print(error)
    if errors:
        print(f"check_docs: {len(errors)} problem(s) (docs/style.md section 8)")
        return 1
    budgets = ", ".join(f"{name} {len(read_lines(root / name))}/{limit} lines"
                        for name, limit in BUDGETS.items())
    print(f"check_docs: OK ({len(files)} files, {documents} documents, {links} relative links; "
          f"{budgets})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
