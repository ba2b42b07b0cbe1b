// SPDX-License-Identifier: Apache-2.0
// Sampling the machine's load from /proc (see machine_load.h).
#include "tensortune/measure/machine_load.h"

#include "tensortune/measure/timing.h"

#include <chrono>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace tensortune::measure {
namespace {

/// Runnable tasks on the machine (the "R" of /proc/loadavg's "R/T"), and the 1-minute load.
bool read_loadavg(int* runnable, double* load1) {
  std::ifstream in("/proc/loadavg");
  std::string l1, l5, l15, counts;
  if (!(in >> l1 >> l5 >> l15 >> counts))
    return false;
  const size_t slash = counts.find('/');
  if (slash == std::string::npos)
    return false;
  try {
    *runnable = std::stoi(counts.substr(0, slash));
    *load1 = std::stod(l1);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

/// This process's threads that are running or runnable now.
int own_runnable() {
  int n = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr)
    return 1;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.')
      continue;
    std::ifstream stat(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
    if (close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'R')
      ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace

MachineLoad sample_machine_load(double seconds) {
  MachineLoad out;
  out.cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  const double end = now_seconds() + seconds;
  double others = 0;
  int samples = 0;
  do {
    int runnable = 0;
    double load1 = 0;
    if (!read_loadavg(&runnable, &load1))
      return out;
    out.loadavg_1min = load1;
    others += std::max(0, runnable - own_runnable());
    ++samples;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (now_seconds() < end);
  out.others_runnable = others / samples;
  return out;
}

MachineLoad wait_for_quiet(double window_seconds, double max_wait_seconds) {
  const double end = now_seconds() + max_wait_seconds;
  MachineLoad load = sample_machine_load(window_seconds);
  while (load.busy() && now_seconds() < end)
    load = sample_machine_load(window_seconds);
  return load;
}

}  // namespace tensortune::measure
