/* SPDX-License-Identifier: Apache-2.0
 * A program that knows nothing of tensortune: it runs a model folder written by
 * `tensortune compile-model` through the C entry point of DIR/model.so, as model.h describes it
 * (weights.bin read into a buffer of tt_model_weight_bytes(), a 64-byte aligned arena of
 * tt_model_arena_bytes(), then tt_model_run). Inputs and outputs are raw files of the tensors'
 * bytes. Links only libc and libdl.
 * usage: run_model DIR IN_0.raw ... OUT_0.raw ...   (exit 0: the model ran) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t (*run_fn)(void* const* inputs, void* const* outputs, void* arena,
                          const void* weights);
typedef int64_t (*size_fn)(void);
typedef int32_t (*count_fn)(void);
typedef int64_t (*size_of_fn)(int32_t i);

static void* lookup(void* lib, const char* name) {
  void* sym = dlsym(lib, name);
  if (sym == NULL) {
    fprintf(stderr, "run_model: no symbol '%s'\n", name);
    exit(3);
  }
  return sym;
}

/* Reads exactly `bytes` bytes of `path` into `buffer`; exits on a short or long file. */
static void read_exactly(const char* path, void* buffer, int64_t bytes) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "run_model: cannot open '%s'\n", path);
    exit(4);
  }
  size_t got = fread(buffer, 1, (size_t)bytes, f);
  int extra = fgetc(f);
  fclose(f);
  if ((int64_t)got != bytes || extra != EOF) {
    fprintf(stderr, "run_model: '%s' does not hold %lld bytes\n", path, (long long)bytes);
    exit(4);
  }
}

static void* aligned(int64_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes > 0 ? (size_t)bytes : 64) != 0) {
    fprintf(stderr, "run_model: out of memory\n");
    exit(5);
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: run_model DIR IN_0.raw ... OUT_0.raw ...\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/model.so", argv[1]);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "run_model: dlopen failed: %s\n", dlerror());
    return 3;
  }
  run_fn run;
  size_fn weight_bytes, arena_bytes;
  count_fn num_inputs, num_outputs;
  size_of_fn input_bytes, output_bytes;
  *(void**)(&run) = lookup(lib, "tt_model_run");
  *(void**)(&weight_bytes) = lookup(lib, "tt_model_weight_bytes");
  *(void**)(&arena_bytes) = lookup(lib, "tt_model_arena_bytes");
  *(void**)(&num_inputs) = lookup(lib, "tt_model_num_inputs");
  *(void**)(&num_outputs) = lookup(lib, "tt_model_num_outputs");
  *(void**)(&input_bytes) = lookup(lib, "tt_model_input_bytes");
  *(void**)(&output_bytes) = lookup(lib, "tt_model_output_bytes");
  int n_in = num_inputs(), n_out = num_outputs();
  if (argc != 2 + n_in + n_out) {
    fprintf(stderr, "run_model: the model takes %d input(s) and %d output(s)\n", n_in, n_out);
    return 2;
  }
  void* weights = aligned(weight_bytes());
  snprintf(path, sizeof path, "%s/weights.bin", argv[1]);
  read_exactly(path, weights, weight_bytes());
  void* arena = aligned(arena_bytes());
  void** inputs = calloc((size_t)n_in + 1, sizeof(void*));
  void** outputs = calloc((size_t)n_out + 1, sizeof(void*));
  for (int i = 0; i < n_in; ++i) {
    inputs[i] = aligned(input_bytes(i));
    read_exactly(argv[2 + i], inputs[i], input_bytes(i));
  }
  for (int i = 0; i < n_out; ++i) {
    outputs[i] = aligned(output_bytes(i));
    memset(outputs[i], 0xff, (size_t)output_bytes(i)); /* NaNs until written */
  }
  int32_t status = run(inputs, outputs, arena, weights);
  if (status != 0) {
    fprintf(stderr, "run_model: tt_model_run returned %d\n", (int)status);
    return 1;
  }
  for (int i = 0; i < n_out; ++i) {
    FILE* f = fopen(argv[2 + n_in + i], "wb");
    if (f == NULL || fwrite(outputs[i], 1, (size_t)output_bytes(i), f) !=
                         (size_t)output_bytes(i)) {
      fprintf(stderr, "run_model: cannot write '%s'\n", argv[2 + n_in + i]);
      return 4;
    }
    fclose(f);
    free(outputs[i]);
  }
  for (int i = 0; i < n_in; ++i) free(inputs[i]);
  free(inputs);
  free(outputs);
  free(arena);
  free(weights);
  dlclose(lib);
  return 0;
}
