// SPDX-License-Identifier: Apache-2.0
// tensortune-worker: the process the measurer builds and runs candidates in (src/measure).
#include "tensortune/measure/worker.h"

int main(int argc, char** argv) {
  return tensortune::measure::worker_main(argc, argv);
}
