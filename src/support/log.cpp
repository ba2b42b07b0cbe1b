// SPDX-License-Identifier: Apache-2.0
// Per-module log levels from TT_LOG (or set_log_spec) and the line writer behind TT_LOG. The spec
// is parsed once; later readers see an immutable snapshot, so log_enabled is safe from any thread.
#include "tensortune/support/log.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>

namespace tensortune::support {
namespace {

/// A parsed spec: a default level plus per-module overrides. Level 0 (errors) is on by default.
struct LogConfig {
  int default_level = 0;
  std::map<std::string, int, std::less<>> modules;
  int max_level = 0;  // the largest level enabled anywhere: the fast "off" test
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

int parse_level(std::string_view text, std::string_view spec) {
  text = trim(text);
  bool ok = !text.empty() && text.size() <= 2;
  int level = 0;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    level = level * 10 + (c - '0');
  }
  TT_USER_CHECK(ok) << "log spec '" << spec << "': level '" << text
                    << "' is not a number in 0..99 (expected e.g. '1' or 'search=2,lower=3')";
  return level;
}

/// Parses "2", "search=2,lower=3" or a mix ("1,search=3"); throws UserError when malformed.
LogConfig parse_spec(std::string_view spec) {
  LogConfig config;
  std::string_view rest = spec;
  while (!trim(rest).empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      config.default_level = parse_level(item, spec);
      continue;
    }
    std::string_view module = trim(item.substr(0, eq));
    TT_USER_CHECK(!module.empty()) << "log spec '" << spec << "': missing module name before '='";
    config.modules[std::string(module)] = parse_level(item.substr(eq + 1), spec);
  }
  config.max_level = config.default_level;
  for (const auto& [name, level] : config.modules) {
    config.max_level = std::max(config.max_level, level);
  }
  return config;
}

std::shared_ptr<const LogConfig> config_from_env() {
  const char* env =
      std::getenv("TT_LOG");  // the one place outside tools/ that reads the environment
  if (env == nullptr) {
    return std::make_shared<const LogConfig>();
  }
  try {
    return std::make_shared<const LogConfig>(parse_spec(env));
  } catch (const UserError& e) {
    std::fprintf(stderr, "[support] ignoring TT_LOG: %s\n", e.what());
    return std::make_shared<const LogConfig>();
  }
}

std::atomic<int> g_max_level{-1};  // -1 = not yet initialised
std::shared_ptr<const LogConfig> g_config;
std::once_flag g_env_once;

std::shared_ptr<const LogConfig> current_config() {
  std::call_once(g_env_once, [] {
    auto config = config_from_env();
    std::atomic_store(&g_config, config);
    g_max_level.store(config->max_level);
  });
  return std::atomic_load(&g_config);
}

/// The module of a path that has no known project root: the folder after the last "src/" or
/// "tools/" (or after "include/tensortune/"); empty when the path has none.
std::string_view module_by_search(std::string_view file) {
  size_t best = std::string_view::npos;
  for (std::string_view root : {"src/", "tools/", "include/tensortune/"}) {
    for (size_t pos = file.find(root); pos != std::string_view::npos;
         pos = file.find(root, pos + 1)) {
      bool at_boundary = pos == 0 || file[pos - 1] == '/';
      if (at_boundary && (best == std::string_view::npos || pos + root.size() > best)) {
        best = pos + root.size();
      }
    }
  }
  if (best == std::string_view::npos) {
    return {};
  }
  size_t slash = file.find('/', best);
  return slash == std::string_view::npos ? std::string_view() : file.substr(best, slash - best);
}

/// The module of a path relative to the project root: the folder after a leading "src/",
/// "tools/" or "include/tensortune/"; empty for anything else (tests/, bench/).
std::string_view module_of_relative(std::string_view rel) {
  for (std::string_view root : {"src/", "tools/", "include/tensortune/"}) {
    if (rel.substr(0, root.size()) == root) {
      rel.remove_prefix(root.size());
      size_t slash = rel.find('/');
      return slash == std::string_view::npos ? std::string_view() : rel.substr(0, slash);
    }
  }
  return {};
}

#ifndef TT_SOURCE_ROOT
#error "TT_SOURCE_ROOT (the project's source folder) must be defined"
#endif
constexpr std::string_view kSourceRoot = TT_SOURCE_ROOT;

}  // namespace

std::string_view log_module_of(std::string_view file, std::string_view source_root) {
  while (!source_root.empty() && source_root.back() == '/') {
    source_root.remove_suffix(1);
  }
  // Under the root known at build time, only the path inside the project counts: a checkout at
  // /src or /home/me/src/tt must not make "src" a folder of the path that names the module.
  if (!source_root.empty() && file.size() > source_root.size() &&
      file.substr(0, source_root.size()) == source_root && file[source_root.size()] == '/') {
    return module_of_relative(file.substr(source_root.size() + 1));
  }
  // A path relative to the build folder (ccache's base_dir rewrites them so): drop "../", "./".
  if (!file.empty() && file.front() == '.') {
    while (file.substr(0, 3) == "../" || file.substr(0, 2) == "./") {
      file.remove_prefix(file[1] == '/' ? 2 : 3);
    }
    return module_of_relative(file);
  }
  return module_by_search(file);
}

namespace {

std::string_view module_of(std::string_view file) {
  return log_module_of(file, kSourceRoot);
}

std::mutex g_write_mutex;

}  // namespace

bool log_enabled(const char* file, int level) {
  int max_level = g_max_level.load(std::memory_order_relaxed);
  if (max_level >= 0 && level > max_level) {
    return false;
  }
  auto config = current_config();
  if (level > config->max_level) {
    return false;
  }
  auto it = config->modules.find(module_of(file));
  return level <= (it == config->modules.end() ? config->default_level : it->second);
}

void set_log_spec(const std::string& spec) {
  auto config = std::make_shared<const LogConfig>(parse_spec(spec));
  current_config();  // read TT_LOG first, so that it can never overwrite this spec
  std::atomic_store(&g_config, config);
  g_max_level.store(config->max_level);
}

LogLine::LogLine(const char* file) : os_(new std::ostringstream) {
  std::string_view module = module_of(file);
  buffer_ = "[" + std::string(module.empty() ? "tensortune" : module) + "] ";
}

LogLine::~LogLine() {
  auto* os = static_cast<std::ostringstream*>(os_);
  std::string line = buffer_ + os->str() + "\n";
  delete os;
  std::lock_guard<std::mutex> lock(g_write_mutex);  // whole lines only, even from many threads
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

std::ostream& LogLine::stream() {
  return *os_;
}

}  // namespace tensortune::support
