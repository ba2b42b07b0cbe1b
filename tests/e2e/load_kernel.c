/* SPDX-License-Identifier: Apache-2.0
 * A program that knows nothing of tensortune: it dlopens a library written by
 * `tensortune compile`, calls its matmul kernel through the documented ABI (inputs in declaration
 * order, then outputs; dense row-major; returns 0) and checks the result against its own naive
 * matmul. Links only libc and libdl.
 * usage: load_kernel LIBRARY.so FUNCTION M N K   (exit 0: results match) */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t (*kernel_fn)(void* const* buffers);

/* Deterministic inputs in [-1, 1], never zero. */
static float input_value(long i, long salt) {
  long v = (i * 37 + salt * 101 + 11) % 17;
  return (float)(v - 8) / 8.0f + (v == 8 ? 0.0625f : 0.0f);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: load_kernel LIBRARY.so FUNCTION M N K\n");
    return 2;
  }
  long m = atol(argv[3]), n = atol(argv[4]), k = atol(argv[5]);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "load_kernel: dlopen failed: %s\n", dlerror());
    return 3;
  }
  kernel_fn fn;
  *(void**)(&fn) = dlsym(lib, argv[2]);
  if (fn == NULL) {
    fprintf(stderr, "load_kernel: no symbol '%s': %s\n", argv[2], dlerror());
    return 3;
  }
  float* a = malloc(sizeof(float) * (size_t)(m * k));
  float* b = malloc(sizeof(float) * (size_t)(k * n));
  float* c = malloc(sizeof(float) * (size_t)(m * n));
  for (long i = 0; i < m * k; ++i) a[i] = input_value(i, 1);
  for (long i = 0; i < k * n; ++i) b[i] = input_value(i, 2);
  for (long i = 0; i < m * n; ++i) c[i] = NAN;
  void* buffers[3] = {a, b, c};
  int32_t status = fn(buffers);
  if (status != 0) {
    fprintf(stderr, "load_kernel: the kernel returned %d\n", (int)status);
    return 1;
  }
  long bad = 0;
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      double expected = 0;
      for (long p = 0; p < k; ++p) expected += (double)a[i * k + p] * (double)b[p * n + j];
      double got = c[i * n + j];
      if (!(fabs(got - expected) <= 1e-4 * (1.0 + fabs(expected)) * sqrt((double)k))) {
        if (bad++ == 0) {
          fprintf(stderr, "load_kernel: C[%ld, %ld] = %g, expected %g\n", i, j, got, expected);
        }
      }
    }
  }
  free(a);
  free(b);
  free(c);
  dlclose(lib);
  if (bad != 0) {
    fprintf(stderr, "load_kernel: %ld of %ld elements differ\n", bad, m * n);
    return 1;
  }
  printf("ok: %s matches the naive matmul (%ldx%ldx%ld)\n", argv[2], m, n, k);
  return 0;
}
