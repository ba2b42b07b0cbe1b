// SPDX-License-Identifier: Apache-2.0
// The shared command line parser. Every mistake is a UsageError naming the option, so main() can
// print it with a pointer to the command's --help and exit 2.
#include "args.h"

#include "tensortune/database/database.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace tensortune::cli {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : sep) + items[i];
  }
  return out;
}

bool is_help(const std::string& arg) {
  return arg == "-h" || arg == "--help";
}

/// `text` broken into lines of at most `width` columns at spaces.
std::string wrap(const std::string& text, size_t width) {
  std::istringstream words(text);
  std::string out;
  std::string line;
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

/// `text` as an integer in [min, max], the whole of it; UsageError naming `what` otherwise.
int64_t parse_int(const std::string& command,
                  const std::string& what,
                  const std::string& text,
                  int64_t min,
                  int64_t max) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < min || value > max) {
    throw UsageError(command + ": " + what + " expects an integer in " + std::to_string(min) +
                         ".." + std::to_string(max) + " (got '" + text + "')",
                     command);
  }
  return value;
}

}  // namespace

int verbosity_of(const std::string& arg) {
  if (arg == "--verbose") {
    return 1;
  }
  if (arg.size() < 2 || arg[0] != '-' || arg[1] != 'v') {
    return 0;
  }
  bool all_v = std::all_of(arg.begin() + 1, arg.end(), [](char c) { return c == 'v'; });
  return all_v ? static_cast<int>(arg.size()) - 1 : 0;
}

ArgParser::ArgParser(std::string command,
                     std::string usage,
                     std::string summary,
                     std::string program)
    : command_(std::move(command)),
      usage_(std::move(usage)),
      summary_(std::move(summary)),
      program_(std::move(program)) {}

ArgParser& ArgParser::option(const std::string& name,
                             const std::string& metavar,
                             const std::string& help,
                             std::vector<std::string> choices,
                             bool required,
                             bool repeatable) {
  options_.push_back(Option{name, metavar, help, std::move(choices), true, required, repeatable});
  return *this;
}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help) {
  options_.push_back(Option{name, "", help, {}, false, false, false});
  return *this;
}

ArgParser& ArgParser::positional(const std::string& metavar,
                                 const std::string& help,
                                 size_t min,
                                 size_t max) {
  positional_ = Positional{metavar, help, min, max};
  return *this;
}

const ArgParser::Option* ArgParser::find(const std::string& name) const {
  for (const Option& o : options_) {
    if (o.name == name) {
      return &o;
    }
  }
  return nullptr;
}

void ArgParser::fail(const std::string& message) const {
  throw UsageError(command_.empty() ? message : command_ + ": " + message, command_);
}

ArgParser::Parsed ArgParser::parse(const std::vector<std::string>& args) const {
  Parsed parsed;
  parsed.command_ = command_;
  auto end_of_options = std::find(args.begin(), args.end(), "--");
  if (std::any_of(args.begin(), end_of_options, is_help)) {
    parsed.help = true;
    return parsed;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positionals_.insert(parsed.positionals_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (int v = verbosity_of(arg); v > 0) {
      parsed.verbosity = std::min(3, parsed.verbosity + v);
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && (arg.size() < 3 || arg[1] != '-')) {
      fail("unknown option '" + arg + "'");
    }
    if (arg.compare(0, 2, "--") != 0) {
      parsed.positionals_.push_back(arg);
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const Option* opt = find(name);
    if (opt == nullptr) {
      fail("unknown option '--" + name + "'");
    }
    std::string value;
    if (!opt->takes_value) {
      if (eq != std::string::npos) {
        fail("option '--" + name + "' takes no value");
      }
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && args[i + 1].compare(0, 2, "--") != 0) {
      value = args[++i];
    } else {
      fail("option '--" + name + "' needs a value (" + opt->metavar + ")");
    }
    if (!opt->choices.empty() &&
        std::find(opt->choices.begin(), opt->choices.end(), value) == opt->choices.end()) {
      std::string message = "option '--" + name + "' expects one of ";
      message += join(opt->choices, ", ") + " (got '" + value + "')";
      fail(message);
    }
    std::vector<std::string>& slot = parsed.values_[name];
    if (!slot.empty() && !opt->repeatable) {
      fail("option '--" + name + "' given more than once");
    }
    slot.push_back(value);
  }
  const size_t given = parsed.positionals_.size();
  if (given > positional_.max) {
    fail("unexpected argument '" + parsed.positionals_[positional_.max] + "'");
  }
  if (given < positional_.min) {
    fail("missing argument " + positional_.metavar);
  }
  for (const Option& o : options_) {
    if (o.required && !parsed.has(o.name)) {
      fail("missing required option '--" + o.name + " " + o.metavar + "'");
    }
  }
  return parsed;
}

std::string ArgParser::help_text() const {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Option& o : options_) {
    std::string left = "--" + o.name + (o.takes_value ? " " + o.metavar : "");
    std::string right = o.help;
    if (!o.choices.empty()) {
      right += " (" + join(o.choices, "|") + ")";
    }
    if (o.required) {
      right += " [required]";
    }
    if (o.repeatable) {
      right += " [repeatable]";
    }
    rows.emplace_back(left, right);
  }
  if (positional_.max > 0) {
    rows.emplace_back(positional_.metavar, positional_.help);
  }
  rows.emplace_back("-v, -vv", "log progress (-v) or details (-vv) to stderr");
  rows.emplace_back("-h, --help", "show this help and exit");
  size_t width = 0;
  for (const auto& row : rows) {
    width = std::max(width, row.first.size());
  }
  std::ostringstream out;
  out << "usage: " << (program_.empty() ? "" : program_ + " ") << usage_ << "\n\n"
      << wrap(summary_, 90) << "\n\noptions:\n";
  for (const auto& [left, right] : rows) {
    out << "  " << left << std::string(width + 2 - left.size(), ' ') << right << "\n";
  }
  return out.str();
}

std::string ArgParser::Parsed::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> ArgParser::Parsed::get_all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t ArgParser::Parsed::get_int(const std::string& name,
                                   int64_t fallback,
                                   int64_t min,
                                   int64_t max) const {
  return has(name) ? parse_int(command_, "option '--" + name + "'", get(name), min, max) : fallback;
}

std::vector<int64_t> ArgParser::Parsed::get_int_list(const std::string& name,
                                                     std::vector<int64_t> fallback,
                                                     int64_t min,
                                                     int64_t max) const {
  if (!has(name)) {
    return fallback;
  }
  std::vector<int64_t> out;
  std::istringstream items(get(name));
  for (std::string item; std::getline(items, item, ',');) {
    if (!item.empty()) {
      out.push_back(parse_int(command_, "each item of '--" + name + "'", item, min, max));
    }
  }
  if (out.empty()) {
    throw UsageError(command_ + ": option '--" + name + "' needs at least one integer", command_);
  }
  return out;
}

double ArgParser::Parsed::get_double(const std::string& name,
                                     double fallback,
                                     double min,
                                     double max) const {
  if (!has(name)) {
    return fallback;
  }
  std::string text = get(name);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= min && value <= max)) {
    std::ostringstream msg;
    msg << command_ << ": option '--" << name << "' expects a number in " << min << ".." << max
        << " (got '" << text << "')";
    throw UsageError(msg.str(), command_);
  }
  return value;
}

void apply_verbosity(int verbosity) {
  if (verbosity > 0) {
    support::set_log_spec(std::to_string(verbosity));
  }
}

std::optional<ArgParser::Parsed> parse_command_line(const ArgParser& parser,
                                                    const std::vector<std::string>& args) {
  ArgParser::Parsed parsed = parser.parse(args);
  if (parsed.help) {
    std::cout << parser.help_text();
    return std::nullopt;
  }
  apply_verbosity(parsed.verbosity);
  return parsed;
}

int run_program(const std::string& program,
                int argc,
                char** argv,
                const std::function<int(const std::vector<std::string>&)>& body) {
  try {
    return body(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n(see '" << program << " --help')\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

std::string database_path(const ArgParser::Parsed& p) {
  return p.get("db", kDefaultDatabase);
}

std::string database_label(const ArgParser::Parsed& p) {
  return database::display_name(database_path(p));
}

bool has_database(const ArgParser::Parsed& p) {
  return p.has("db") || std::filesystem::is_regular_file(kDefaultDatabase);
}

void check_database_exists(const std::string& where, const std::string& command) {
  // A server URL names a database the server checks; only a file can be missing here.
  TT_USER_CHECK(database::is_server_url(where) || std::filesystem::is_regular_file(where))
      << command << ": database '" << where << "' does not exist";
}

}  // namespace tensortune::cli
