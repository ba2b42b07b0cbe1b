#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The C API from Python's ctypes, with no Python package: libtensortune.so is loaded by path, a
# database created and reopened read-only, a matmul looked up, compiled in process, called on
# ctypes arrays and checked against a naive matmul, the untuned workloads listed, and errors
# checked. usage: c_api_ctypes_test.py LIBTENSORTUNE.so   (exit 0: every check passed)
"""Exercises tensortune's C API through ctypes."""

import ctypes
import os
import sys
import tempfile

TT_OK, TT_ERROR_INVALID_ARGUMENT, TT_ERROR_USER = 0, 1, 2
TT_DB_READ_ONLY, TT_DB_READ_WRITE = 0, 1


def declare(lib):
    """Argument and result types of the functions used (c_api.h)."""
    p, c, i32, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int64
    pp = ctypes.POINTER(ctypes.c_void_p)
    signatures = {
        "tt_version": (c, []), "tt_last_error": (c, []), "tt_status_name": (c, [ctypes.c_int]),
        "tt_db_open": (ctypes.c_int, [c, ctypes.c_int, pp]), "tt_db_close": (None, [p]),
        "tt_compiler_create": (ctypes.c_int, [p, c, pp]), "tt_compiler_free": (None, [p]),
        "tt_lookup_best": (ctypes.c_int, [p, c, pp]), "tt_lookup_free": (None, [p]),
        "tt_lookup_source": (c, [p]), "tt_lookup_describe": (c, [p]),
        "tt_lookup_record_id": (i64, [p]),
        "tt_compile": (ctypes.c_int, [p, c, pp]), "tt_kernel_free": (None, [p]),
        "tt_kernel_call": (ctypes.c_int, [p, pp]),
        "tt_kernel_num_buffers": (i32, [p]), "tt_kernel_num_inputs": (i32, [p]),
        "tt_kernel_buffer_name": (c, [p, i32]), "tt_kernel_buffer_dtype": (c, [p, i32]),
        "tt_kernel_buffer_ndim": (i32, [p, i32]), "tt_kernel_buffer_dim": (i64, [p, i32, i32]),
        "tt_untuned_count": (ctypes.c_size_t, [p]),
        "tt_untuned_name": (c, [p, ctypes.c_size_t]),
        "tt_set_num_threads": (None, [i32]), "tt_get_num_threads": (i32, []),
    }
    for name, (result, args) in signatures.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = result, args


def check(ok, what, lib):
    if not ok:
        raise AssertionError(f"{what} (last error: {lib.tt_last_error().decode()})")


def shape(lib, kernel, i):
    return [lib.tt_kernel_buffer_dim(kernel, i, d) for d in range(lib.tt_kernel_buffer_ndim(kernel, i))]


def run_kernel(lib, kernel):
    """Calls the matmul kernel on deterministic inputs; returns (a, b, c, m, n, k)."""
    (m, k), (_, n) = shape(lib, kernel, 0), shape(lib, kernel, 1)
    a = (ctypes.c_float * (m * k))(*[((i * 37 + 11) % 17 - 8) / 8 for i in range(m * k)])
    b = (ctypes.c_float * (k * n))(*[((i * 37 + 22) % 17 - 8) / 8 for i in range(k * n)])
    c = (ctypes.c_float * (m * n))()
    buffers = (ctypes.c_void_p * 3)(ctypes.addressof(a), ctypes.addressof(b), ctypes.addressof(c))
    check(lib.tt_kernel_call(kernel, buffers) == TT_OK, "tt_kernel_call", lib)
    return a, b, c, m, n, k


def main():
    lib = ctypes.CDLL(sys.argv[1])
    declare(lib)
    print("tensortune", lib.tt_version().decode())
    with tempfile.TemporaryDirectory(prefix="tt_ctypes_") as folder:
        path = os.path.join(folder, "tune.db").encode()
        db = ctypes.c_void_p()
        check(lib.tt_db_open(path, TT_DB_READ_WRITE, ctypes.byref(db)) == TT_OK, "create", lib)
        lib.tt_db_close(db)
        check(lib.tt_db_open(path, TT_DB_READ_ONLY, ctypes.byref(db)) == TT_OK, "reopen", lib)
        compiler = ctypes.c_void_p()
        check(lib.tt_compiler_create(db, b"llvm", ctypes.byref(compiler)) == TT_OK, "compiler", lib)
        spec = b"matmul:M=40,N=24,K=16"
        lookup = ctypes.c_void_p()
        check(lib.tt_lookup_best(compiler, spec, ctypes.byref(lookup)) == TT_OK, "lookup", lib)
        check(lib.tt_lookup_source(lookup) == b"default", "an empty database: default", lib)
        check(lib.tt_lookup_record_id(lookup) == 0, "no record", lib)
        print("lookup:", lib.tt_lookup_describe(lookup).decode())
        lib.tt_lookup_free(lookup)

        kernel = ctypes.c_void_p()
        check(lib.tt_compile(compiler, spec, ctypes.byref(kernel)) == TT_OK, "compile", lib)
        check(lib.tt_kernel_num_buffers(kernel) == 3 and lib.tt_kernel_num_inputs(kernel) == 2,
              "three buffers, two inputs", lib)
        check(lib.tt_kernel_buffer_dtype(kernel, 2) == b"float32", "float32 output", lib)
        lib.tt_set_num_threads(2)
        check(lib.tt_get_num_threads() == 2, "two threads", lib)
        a, b, c, m, n, k = run_kernel(lib, kernel)
        bad = sum(1 for i in range(m) for j in range(n)
                  if abs(c[i * n + j] - sum(a[i * k + p] * b[p * n + j] for p in range(k)))
                  > 1e-4 * (1 + abs(c[i * n + j])))
        print(f"kernel {m}x{n}x{k}: {bad} elements off the naive matmul")
        check(bad == 0, "the kernel matches the naive matmul", lib)
        check(lib.tt_kernel_buffer_name(kernel, 3) == b"", "buffer index out of range", lib)
        lib.tt_kernel_free(kernel)

        untuned = [lib.tt_untuned_name(compiler, i).decode()
                   for i in range(lib.tt_untuned_count(compiler))]
        print("untuned:", untuned)
        check(untuned == ["matmul_40x24x16_float32"], "one untuned workload", lib)

        status = lib.tt_lookup_best(compiler, b"no_such_operator:M=1", ctypes.byref(lookup))
        print("a bad spec:", lib.tt_status_name(status).decode(), "-", lib.tt_last_error().decode())
        check(status == TT_ERROR_USER and b"no_such_operator" in lib.tt_last_error(),
              "an unknown operator is a user error naming it", lib)
        absent = ctypes.c_void_p()
        status = lib.tt_db_open(os.path.join(folder, "absent.db").encode(), TT_DB_READ_ONLY,
                                ctypes.byref(absent))
        check(status == TT_ERROR_USER, "a missing database opened read-only", lib)
        check(lib.tt_compile(None, spec, ctypes.byref(kernel)) == TT_ERROR_INVALID_ARGUMENT,
              "a null compiler", lib)
        lib.tt_compiler_free(compiler)
        lib.tt_db_close(db)
    print("c_api_ctypes_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
