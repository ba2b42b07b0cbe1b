#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Enforces the module dependency table of ARCHITECTURE.md (docs/style.md section 1): LLVM's
# layering rule, made mechanical. Every `#include "tensortune/<m>/..."` and every CMake DEPS entry
# must be an edge of the table. Usage: check_layering.py [--root REPO]. Exit status 1 on any
# violation.
"""Checks module includes and CMake DEPS against the dependency table."""

import argparse
import pathlib
import re
import sys

# Module -> modules it may depend on (ARCHITECTURE.md's table). `search` may use everything above it
# except `driver`; nothing but tools/ may use `search`. tools/ and tests/ may include everything.
ALLOWED = {
    "support": set(),
    "ir": {"support"},
    "target": {"support"},
    "te": {"ir", "support"},
    "schedule": {"te", "ir", "support"},
    "lower": {"schedule", "te", "ir", "target", "support"},
    "codegen": {"ir", "target", "runtime", "support"},
    "measure": {"codegen", "runtime", "ir", "target", "support"},
    "cost_model": {"ir", "support"},
    "database": {"support"},
    "search": {"support", "ir", "target", "te", "schedule", "lower", "codegen", "runtime",
               "measure", "cost_model", "database"},
    "driver": {"database", "schedule", "lower", "codegen", "te", "target", "ir", "support"},
    "runtime": {"support"},
    "graph": {"driver", "database", "runtime", "te", "target", "ir", "support"},
    "capi": {"driver", "database", "schedule", "codegen", "runtime", "te", "target", "ir",
             "support"},
}

SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".inc", ".def"}
PUBLIC_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]tensortune/([A-Za-z0-9_]+)/')
PRIVATE_INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/')
DEPS_CALL = re.compile(r"tt_add_module\s*\(\s*([A-Za-z0-9_]+)(.*?)\)", re.S)


def allowed_text(module):
    deps = sorted(ALLOWED[module])
    return ", ".join(deps) if deps else "nothing (std only)"


def source_files(folder):
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)


def module_folders(root):
    """Yields (module, folder) for include/tensortune/<m> and src/<m>."""
    for base in (root / "include" / "tensortune", root / "src"):
        if base.is_dir():
            for folder in sorted(p for p in base.iterdir() if p.is_dir()):
                yield folder.name, folder


def check_includes(root, errors):
    """Returns {module: set of modules its files include}; appends violations to `errors`."""
    used = {}
    files = 0
    for module, folder in module_folders(root):
        rel_folder = folder.relative_to(root)
        if module not in ALLOWED:
            errors.append(f"{rel_folder}: unknown module folder '{module}' "
                          f"(known: {', '.join(sorted(ALLOWED))})")
            continue
        for path in source_files(folder):
            files += 1
            rel = path.relative_to(root)
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for number, line in enumerate(lines, 1):
                check_line(root, module, f"{rel}:{number}", line, used, errors)
    return used, files


def check_line(root, module, where, line, used, errors):
    match = PUBLIC_INCLUDE.match(line)
    if match:
        dep = match.group(1)
        if dep not in ALLOWED:
            errors.append(f"{where}: includes unknown module 'tensortune/{dep}/'")
        elif dep != module and dep not in ALLOWED[module]:
            errors.append(f"{where}: module '{module}' may not include "
                          f"'tensortune/{dep}/...' ({module} may depend on: "
                          f"{allowed_text(module)})")
        else:
            used.setdefault(module, set()).add(dep)
        return
    match = PRIVATE_INCLUDE.match(line)
    if match:
        dep = match.group(1)
        if dep in ALLOWED and dep != module and (root / "src" / dep).is_dir():
            errors.append(f"{where}: module '{module}' includes a private header of "
                          f"'{dep}' (src/{dep}/ headers are never included from another folder)")


def parse_deps(cmake_text):
    """The DEPS list of the tt_add_module() call, or None when there is no such call."""
    call = DEPS_CALL.search(re.sub(r"#[^\n]*", "", cmake_text))
    if not call:
        return None
    words = call.group(2).split()
    deps, in_deps = [], False
    for word in words:
        if word in ("SOURCES", "DEPS", "EXTERNAL"):
            in_deps = word == "DEPS"
        elif in_deps:
            deps.append(word)
    return call.group(1), deps


def check_cmake(root, used, errors):
    """Each src/<m>/CMakeLists.txt: DEPS within the table, and covering every module included."""
    src = root / "src"
    if not src.is_dir():
        return
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        module = folder.name
        cmake = folder / "CMakeLists.txt"
        if module not in ALLOWED or not cmake.is_file():
            continue
        rel = cmake.relative_to(root)
        parsed = parse_deps(cmake.read_text(encoding="utf-8"))
        if parsed is None:
            errors.append(f"{rel}: no tt_add_module() call")
            continue
        name, deps = parsed
        if name != module:
            errors.append(f"{rel}: tt_add_module({name}) in the folder of module '{module}'")
        for dep in deps:
            if dep not in ALLOWED[module]:
                errors.append(f"{rel}: DEPS names '{dep}', which module '{module}' may not use "
                              f"({module} may depend on: {allowed_text(module)})")
        missing = sorted(used.get(module, set()) - set(deps) - {module})
        if missing:
            errors.append(f"{rel}: module '{module}' includes headers of {', '.join(missing)} "
                          f"but DEPS does not list {'it' if len(missing) == 1 else 'them'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    default_root = pathlib.Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=pathlib.Path, default=default_root,
                        help="repository root (default: the parent of scripts/)")
    root = parser.parse_args().root.resolve()
    errors = []
    used, files = check_includes(root, errors)
    check_cmake(root, used, errors)
    for error in errors:
        print(error)
    if errors:
        print(f"check_layering: {len(errors)} violation(s) of the dependency table "
              f"(ARCHITECTURE.md, docs/style.md section 1)")
        return 1
    edges = sum(len(deps - {module}) for module, deps in used.items())
    print(f"check_layering: OK ({files} files, {len(used)} modules, {edges} module edges in use)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
