// SPDX-License-Identifier: Apache-2.0
// tensortune's errors as Python exceptions: Error, UserError (ScheduleError, and the CLI's usage
// errors: an unknown or malformed keyword option), InternalError; the message is the CLI's.
#include "bindings.h"
#include "tensortune/support/error.h"

namespace tensortune::python {
namespace {

/// The exception classes, created once when the module is imported and never freed.
PyObject* g_error = nullptr;
PyObject* g_user_error = nullptr;
PyObject* g_schedule_error = nullptr;
PyObject* g_internal_error = nullptr;

PyObject* new_exception(py::module_& m, const char* name, PyObject* base, const char* doc) {
  const std::string qualified = std::string("tensortune.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) {
    throw py::error_already_set();
  }
  m.add_object(name, py::handle(type));
  return type;
}

}  // namespace

void define_errors(py::module_& m) {
  g_error =
      new_exception(m, "Error", PyExc_Exception, "Base class of the errors tensortune raises.");
  g_user_error = new_exception(
      m, "UserError", g_error,
      "The input is wrong (a malformed workload, target, schedule, file or option); the message "
      "names what and is the one the command line prints.");
  g_schedule_error = new_exception(
      m, "ScheduleError", g_user_error,
      "A schedule step does not apply (unknown stage or axis, illegal order), naming the step.");
  g_internal_error = new_exception(m, "InternalError", g_error,
                                   "A bug in tensortune: please report it with the message.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const ScheduleError& e) {
      PyErr_SetString(g_schedule_error, e.what());
    } catch (const UserError& e) {
      PyErr_SetString(g_user_error, e.what());
    } catch (const cli::UsageError& e) {
      PyErr_SetString(g_user_error, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(g_internal_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

}  // namespace tensortune::python
