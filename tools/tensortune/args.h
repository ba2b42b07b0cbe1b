// SPDX-License-Identifier: Apache-2.0
// The command line parser shared by every subcommand: GNU long options ("--name value" and
// "--name=value"), flags, repeated options, -h/--help and -v/-vv. argv is parsed only in tools/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensortune::cli {

/// A malformed command line (unknown option, missing value, bad choice): exit code 2.
class UsageError : public std::runtime_error {
 public:
  /// `command` is the subcommand whose --help the message points to ("" for the program).
  UsageError(const std::string& message, std::string command)
      : std::runtime_error(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

/// The options a command accepts, and its help text.
class ArgParser {
 public:
  /// `command` is "show", "bench", ... (used in messages); `usage` the synopsis after
  /// `program`'s name ("" for a program whose usage names itself, as a benchmark's does);
  /// `summary` one paragraph describing the command.
  ArgParser(std::string command,
            std::string usage,
            std::string summary,
            std::string program = "tensortune");

  /// An option taking a value. `choices` (when not empty) lists the accepted values; `required`
  /// makes its absence a usage error; `repeatable` allows it more than once.
  ArgParser& option(const std::string& name,
                    const std::string& metavar,
                    const std::string& help,
                    std::vector<std::string> choices = {},
                    bool required = false,
                    bool repeatable = false);
  /// An option without a value.
  ArgParser& flag(const std::string& name, const std::string& help);
  /// Arguments that are not options (database paths, ...): between `min` and `max` of them;
  /// without this call any such argument is a usage error.
  ArgParser& positional(const std::string& metavar,
                        const std::string& help,
                        size_t min,
                        size_t max = SIZE_MAX);

  /// The result of parse().
  class Parsed {
   public:
    /// True when the option or flag was given.
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    /// The last value of `name`, or `fallback` when absent.
    std::string get(const std::string& name, const std::string& fallback = "") const;
    /// Every value of a repeated option, in command line order.
    std::vector<std::string> get_all(const std::string& name) const;
    /// The arguments that are not options, in command line order.
    const std::vector<std::string>& positionals() const { return positionals_; }
    /// The value of `name` as an integer in [min, max]; UsageError otherwise.
    int64_t get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
    /// The value of `name` as a number in [min, max]; UsageError otherwise.
    double get_double(const std::string& name, double fallback, double min, double max) const;
    /// The value of `name` as a comma-separated list of integers in [min, max] (empty items
    /// skipped), or `fallback` when absent; UsageError on any other item or an empty list.
    std::vector<int64_t> get_int_list(const std::string& name,
                                      std::vector<int64_t> fallback,
                                      int64_t min,
                                      int64_t max) const;
    /// -h or --help was given (other checks are skipped then).
    bool help = false;
    /// 0, 1 (-v) or 2 (-vv, or -v twice).
    int verbosity = 0;

   private:
    friend class ArgParser;
    std::string command_;
    std::map<std::string, std::vector<std::string>> values_;
    std::vector<std::string> positionals_;
  };

  /// Parses the arguments after the subcommand name; throws UsageError.
  Parsed parse(const std::vector<std::string>& args) const;
  /// The --help text.
  std::string help_text() const;

 private:
  struct Option {
    std::string name, metavar, help;
    std::vector<std::string> choices;
    bool takes_value = true;
    bool required = false;
    bool repeatable = false;
  };
  const Option* find(const std::string& name) const;
  [[noreturn]] void fail(const std::string& message) const;

  std::string command_, usage_, summary_, program_;
  std::vector<Option> options_;
  struct Positional {
    std::string metavar, help;
    size_t min = 0, max = 0;
  };
  Positional positional_;  // max 0: none accepted
};

/// "-v" -> 1, "-vv" -> 2, ... and "--verbose" -> 1; 0 when `arg` is not a verbosity flag.
int verbosity_of(const std::string& arg);

/// -v / -vv (1, 2, ...) as the log settings' level; 0 leaves them as they are.
void apply_verbosity(int verbosity);

/// Parses `args` (the words after the command or program name). On -h/--help prints the help on
/// stdout and returns nullopt; otherwise applies -v/-vv to the log settings. Throws UsageError.
std::optional<ArgParser::Parsed> parse_command_line(const ArgParser& parser,
                                                    const std::vector<std::string>& args);

/// The database every command uses without --db: the one `tune` writes.
constexpr const char* kDefaultDatabase = "tuning_logs/tensortune.db";
/// --db (a file or a postgresql:// URL), else kDefaultDatabase.
std::string database_path(const ArgParser::Parsed& p);
/// database_path as output shows it: a URL without its password.
std::string database_label(const ArgParser::Parsed& p);
/// UserError "COMMAND: database 'WHERE' does not exist" for a file that is not there (commands
/// that must not create one); a server URL passes, the server answers for it.
void check_database_exists(const std::string& where, const std::string& command);
/// For a command whose database is optional (compile, bench, show, compile-model): --db given,
/// or the default database exists.
bool has_database(const ArgParser::Parsed& p);

/// main of a program that is not the tensortune binary (a benchmark): `body` with the arguments
/// after argv[0]; a UsageError is printed with a pointer to `program --help` and exits 2, any
/// other exception is printed after `program`'s name and exits 1.
int run_program(const std::string& program,
                int argc,
                char** argv,
                const std::function<int(const std::vector<std::string>&)>& body);

}  // namespace tensortune::cli
