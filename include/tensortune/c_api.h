/* SPDX-License-Identifier: Apache-2.0 */
/* tensortune's C API: plain C (C99 and C++), opaque handles, a status code from every call that
 * can fail and a per-thread message for the last failure. No C++ type crosses it. It sits on the
 * driver: a database, the compile-time lookup of a workload spec on a target, kernels compiled
 * in process or exported as a shared library and header. Link with -ltensortune (pkg-config
 * tensortune, or CMake's tensortune::tensortune). See docs/c_api.md. */
#ifndef TENSORTUNE_C_API_H
#define TENSORTUNE_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a call returned. Every failure also sets the calling thread's message (tt_last_error). */
typedef enum tt_status {
  TT_OK = 0,
  TT_ERROR_INVALID_ARGUMENT = 1, /* a null handle or pointer, or an index out of range */
  TT_ERROR_USER = 2,             /* bad input: unknown spec or target, unreadable database, ... */
  TT_ERROR_KERNEL = 3,           /* a compiled kernel returned a non-zero status */
  TT_ERROR_INTERNAL = 4          /* a bug in tensortune */
} tt_status;

/* "ok", "invalid argument", "user error", "kernel error", "internal error". */
const char* tt_status_name(tt_status status);
/* The message of the calling thread's last failure ("" when none). Valid until the next failing
 * call on this thread. */
const char* tt_last_error(void);

/* The library's version: "0.1.0", and its parts. */
const char* tt_version(void);
int tt_version_major(void);
int tt_version_minor(void);
int tt_version_patch(void);

/* The thread pool in-process kernels (tt_kernel_call) run their parallel loops on: n >= 1
 * threads, 0 = one per hardware thread (the default). TT_THREAD_SPIN_US sets how long an idle
 * worker spins before it sleeps (microseconds, default 100, 0 = never). */
void tt_set_num_threads(int32_t n);
int32_t tt_get_num_threads(void);

/* A tuning database (SQLite). TT_DB_READ_ONLY never writes; TT_DB_READ_WRITE creates the file
 * when missing and brings its schema up to date. Close with tt_db_close. */
typedef struct tt_db tt_db;
typedef enum tt_db_mode { TT_DB_READ_ONLY = 0, TT_DB_READ_WRITE = 1 } tt_db_mode;
/* mode is a tt_db_mode; it is passed as an int so that any value a caller sends is checked
 * (TT_ERROR_INVALID_ARGUMENT) rather than being undefined behaviour in the library. */
tt_status tt_db_open(const char* path, int mode, tt_db** out);
void tt_db_close(tt_db* db);
/* The number of records the database holds (every status). */
tt_status tt_db_count_records(const tt_db* db, int64_t* out);

/* Lookups and compiles for one target ("native", "llvm -mcpu=znver4 -cores=2", ...), from one
 * database (`db` may be null: every workload then gets a fallback). `db` must outlive it. Not
 * thread-safe: use one per thread. Free with tt_compiler_free. */
typedef struct tt_compiler tt_compiler;
tt_status tt_compiler_create(const tt_db* db, const char* target, tt_compiler** out);
void tt_compiler_free(tt_compiler* compiler);
/* Also consults `shipped` (the tuning logs shipped with tensortune, tt_shipped_logs_path,
 * opened read-only) after the database: records tuned on a CPU whose ISA features this host has.
 * Null turns it off. It must outlive the compiler. */
tt_status tt_compiler_set_shipped(tt_compiler* compiler, const tt_db* shipped);
/* The shipped tuning logs: share/tensortune/shipped/cpu.db of the prefix libtensortune.so is
 * installed in, else tuning_logs/shipped/cpu.db of the source tree it was built from; "" when
 * neither exists. Valid until this thread's next call. */
const char* tt_shipped_logs_path(void);

/* The schedule chosen for a workload spec ("matmul:M=512,N=512,K=512") and where it came from.
 * Strings are owned by the lookup. Free with tt_lookup_free. */
typedef struct tt_lookup tt_lookup;
tt_status tt_lookup_best(tt_compiler* compiler, const char* spec, tt_lookup** out);
void tt_lookup_free(tt_lookup* lookup);
/* "record" (the database's best record), "adapted" (a record of another shape of the operator),
 * "shipped", or "default" (no usable record). */
const char* tt_lookup_source(const tt_lookup* lookup);
/* One line: "record #12", "adapted from record #7 (matmul_64x64x64_float32)", ... */
const char* tt_lookup_describe(const tt_lookup* lookup);
/* The workload's name and key. */
const char* tt_lookup_workload(const tt_lookup* lookup);
const char* tt_lookup_workload_key(const tt_lookup* lookup);
/* The schedule as JSON (the steps applied). */
const char* tt_lookup_schedule(const tt_lookup* lookup);
/* The record applied or adapted (0 for default): its id, seconds per call as ranked, and its
 * provenance: tool version, git revision, Unix time measured, tuning run id, device
 * fingerprint ("" or 0 when there is no record). */
int64_t tt_lookup_record_id(const tt_lookup* lookup);
double tt_lookup_seconds(const tt_lookup* lookup);
const char* tt_lookup_tool_version(const tt_lookup* lookup);
const char* tt_lookup_git_revision(const tt_lookup* lookup);
int64_t tt_lookup_timestamp(const tt_lookup* lookup);
int64_t tt_lookup_run_id(const tt_lookup* lookup);
const char* tt_lookup_device(const tt_lookup* lookup);

/* A workload spec compiled in process (LLVM JIT) with the looked-up schedule. Free with
 * tt_kernel_free; its code lives until then. */
typedef struct tt_kernel tt_kernel;
tt_status tt_compile(tt_compiler* compiler, const char* spec, tt_kernel** out);
void tt_kernel_free(tt_kernel* kernel);
/* Runs the kernel on `buffers`: one pointer per buffer, inputs then outputs, each a dense
 * row-major array of the buffer's element type and shape. TT_ERROR_KERNEL when the kernel
 * returns non-zero. Calls on one kernel from several threads at once are safe. */
tt_status tt_kernel_call(const tt_kernel* kernel, void* const* buffers);
/* The kernel's buffers: count, how many are inputs (the first ones), and for buffer i its name,
 * element type ("float32", "int32", ...), rank, extent of dimension d, and size in bytes. */
int32_t tt_kernel_num_buffers(const tt_kernel* kernel);
int32_t tt_kernel_num_inputs(const tt_kernel* kernel);
const char* tt_kernel_buffer_name(const tt_kernel* kernel, int32_t i);
const char* tt_kernel_buffer_dtype(const tt_kernel* kernel, int32_t i);
int32_t tt_kernel_buffer_ndim(const tt_kernel* kernel, int32_t i);
int64_t tt_kernel_buffer_dim(const tt_kernel* kernel, int32_t i, int32_t d);
int64_t tt_kernel_buffer_bytes(const tt_kernel* kernel, int32_t i);
/* The exported function's name and where its schedule came from (as tt_lookup_describe). */
const char* tt_kernel_name(const tt_kernel* kernel);
const char* tt_kernel_describe(const tt_kernel* kernel);

/* Writes DIR/libNAME.so exporting one function per spec (each with the looked-up schedule) and
 * DIR/NAME.h declaring them, their buffers, and NAME_set_num_threads / NAME_get_num_threads.
 * CPU targets only. DIR is created when missing. */
tt_status tt_export_library(tt_compiler* compiler,
                            const char* const* specs,
                            size_t num_specs,
                            const char* dir,
                            const char* name);

/* The workloads this compiler looked up or compiled that had no record of their own (they got
 * an adapted, shipped or default schedule), each once, in the order they were first met:
 * their count, and the name of the i-th (valid until the next lookup or compile). */
size_t tt_untuned_count(const tt_compiler* compiler);
const char* tt_untuned_name(const tt_compiler* compiler, size_t i);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORTUNE_C_API_H */
