// SPDX-License-Identifier: Apache-2.0
// The `_tensortune` extension module: the C++ library under the `tensortune` Python package. Each
// area registers itself from its own define_*.cpp; the pythonic surface is in tensortune/*.py.
#include "bindings.h"

PYBIND11_MODULE(_tensortune, m) {
  m.doc() =
      "The compiled core of the tensortune package; use `import tensortune` and its modules "
      "(te, schedule, database, model) instead of this one.";
  namespace tp = tensortune::python;
  tp::define_errors(m);
  tp::define_te(m);
  tp::define_schedule(m);
  tp::define_database(m);
  tp::define_tune(m);
  tp::define_build(m);
  tp::define_model(m);
}
