/* SPDX-License-Identifier: Apache-2.0
 * The C API from plain C, as a user's compiler would call it: open a database (created
 * read-write, then read-only), look a workload up, compile it in process and check the kernel
 * against a naive matmul, list the untuned workloads, export a library and call it through
 * dlopen with its thread count set, and see an error reported. It builds inside the tree
 * (CTest CApi.CProgram) and as an outside project against an installed tensortune
 * (tests/e2e/install_test.cmake).
 * usage: c_api_example DIR   (DIR: an empty folder it may write; exit 0: all checks passed) */
#include "tensortune/c_api.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

/* Reports a failed call or check; returns `ok`. */
static int expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "c_api_example: FAILED: %s (last error: %s)\n", what, tt_last_error());
    ++failures;
  }
  return ok;
}

/* How many elements of c (m x n) differ from the naive matmul of a (m x k) and b (k x n). */
static long matmul_errors(const float* a, const float* b, const float* c, long m, long n, long k) {
  long bad = 0;
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      double want = 0;
      for (long p = 0; p < k; ++p) want += (double)a[i * k + p] * (double)b[p * n + j];
      if (fabs(c[i * n + j] - want) > 1e-4 * (1.0 + fabs(want))) ++bad;
    }
  }
  return bad;
}

static void fill(float* x, long count, long salt) {
  for (long i = 0; i < count; ++i) x[i] = (float)((i * 37 + salt * 11) % 17 - 8) / 8.0f;
}

typedef int32_t (*kernel_fn)(void* const* buffers);
typedef void (*set_threads_fn)(int32_t n);
typedef int32_t (*get_threads_fn)(void);

/* Loads DIR/libmm.so, sets its thread count, and runs FUNCTION on a, b into c. */
static void call_exported(const char* dir, const char* function, float* a, float* b, float* c) {
  char path[4096];
  snprintf(path, sizeof path, "%s/libmm.so", dir);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!expect(lib != NULL, "dlopen libmm.so")) return;
  kernel_fn fn;
  set_threads_fn set_threads;
  get_threads_fn get_threads;
  *(void**)(&fn) = dlsym(lib, function);
  *(void**)(&set_threads) = dlsym(lib, "mm_set_num_threads");
  *(void**)(&get_threads) = dlsym(lib, "mm_get_num_threads");
  if (expect(fn && set_threads && get_threads, "the library's functions")) {
    set_threads(2);
    expect(get_threads() == 2, "mm_get_num_threads() == 2 after mm_set_num_threads(2)");
    void* buffers[3] = {a, b, c};
    expect(fn(buffers) == 0, "the exported kernel returns 0");
  }
  dlclose(lib);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_example DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  const char* spec = "matmul:M=64,N=48,K=32";
  char db_path[4096];
  snprintf(db_path, sizeof db_path, "%s/tune.db", dir);
  printf("tensortune %s\n", tt_version());

  tt_db* db = NULL;
  if (!expect(tt_db_open(db_path, TT_DB_READ_WRITE, &db) == TT_OK, "create the database")) return 1;
  tt_db_close(db);
  if (!expect(tt_db_open(db_path, TT_DB_READ_ONLY, &db) == TT_OK, "open it read-only")) return 1;
  tt_compiler* compiler = NULL;
  if (!expect(tt_compiler_create(db, "llvm", &compiler) == TT_OK, "create a compiler")) return 1;
  /* The shipped tuning logs, consulted after the database (for this host's CPU features). */
  tt_db* shipped = NULL;
  printf("shipped logs: %s\n", tt_shipped_logs_path());
  if (expect(tt_db_open(tt_shipped_logs_path(), TT_DB_READ_ONLY, &shipped) == TT_OK,
             "open the shipped logs")) {
    expect(tt_compiler_set_shipped(compiler, shipped) == TT_OK, "use the shipped logs");
  }

  tt_lookup* lookup = NULL;
  if (expect(tt_lookup_best(compiler, spec, &lookup) == TT_OK, "look the matmul up")) {
    printf("lookup: %s: %s\n", tt_lookup_workload(lookup), tt_lookup_describe(lookup));
    expect(strcmp(tt_lookup_source(lookup), "record") != 0, "an empty database has no record");
    tt_lookup_free(lookup);
  }

  tt_kernel* kernel = NULL;
  if (expect(tt_compile(compiler, spec, &kernel) == TT_OK, "compile the matmul")) {
    long m = tt_kernel_buffer_dim(kernel, 2, 0), n = tt_kernel_buffer_dim(kernel, 2, 1);
    long k = tt_kernel_buffer_dim(kernel, 0, 1);
    expect(tt_kernel_num_buffers(kernel) == 3 && tt_kernel_num_inputs(kernel) == 2,
           "three buffers, two of them inputs");
    expect(strcmp(tt_kernel_buffer_dtype(kernel, 0), "float32") == 0, "float32 buffers");
    float* a = malloc((size_t)tt_kernel_buffer_bytes(kernel, 0));
    float* b = malloc((size_t)tt_kernel_buffer_bytes(kernel, 1));
    float* c = malloc((size_t)tt_kernel_buffer_bytes(kernel, 2));
    fill(a, m * k, 1);
    fill(b, k * n, 2);
    void* buffers[3] = {a, b, c};
    tt_set_num_threads(2);
    expect(tt_kernel_call(kernel, buffers) == TT_OK, "call the kernel");
    long bad = matmul_errors(a, b, c, m, n, k);
    printf("in process: %s (%ldx%ldx%ld), %ld elements off the naive matmul\n",
           tt_kernel_name(kernel), m, n, k, bad);
    expect(bad == 0, "the in-process kernel matches the naive matmul");

    const char* specs[1] = {spec};
    if (expect(tt_export_library(compiler, specs, 1, dir, "mm") == TT_OK, "export libmm.so")) {
      memset(c, 0, (size_t)tt_kernel_buffer_bytes(kernel, 2));
      call_exported(dir, tt_kernel_name(kernel), a, b, c);
      bad = matmul_errors(a, b, c, m, n, k);
      printf("exported: %s/libmm.so, %ld elements off the naive matmul\n", dir, bad);
      expect(bad == 0, "the exported kernel matches the naive matmul");
    }
    free(a);
    free(b);
    free(c);
    tt_kernel_free(kernel);
  }

  printf("untuned: %zu", tt_untuned_count(compiler));
  for (size_t i = 0; i < tt_untuned_count(compiler); ++i) printf(" %s", tt_untuned_name(compiler, i));
  printf("\n");
  expect(tt_untuned_count(compiler) == 1, "one untuned workload");

  tt_status status = tt_lookup_best(compiler, "matmul:M=0,N=1,K=1", &lookup);
  printf("a bad spec: %s: %s\n", tt_status_name(status), tt_last_error());
  expect(status == TT_ERROR_USER && lookup == NULL && strlen(tt_last_error()) > 0,
         "a bad spec is a user error with a message");
  expect(tt_compile(NULL, spec, &kernel) == TT_ERROR_INVALID_ARGUMENT, "a null compiler");

  tt_compiler_free(compiler);
  tt_db_close(shipped);
  tt_db_close(db);
  printf("c_api_example: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
