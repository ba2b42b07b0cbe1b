// SPDX-License-Identifier: Apache-2.0
// `tensortune ops`: the operators a workload spec may name, with the keys each accepts.
#include "commands.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <fmt/format.h>
#include <iostream>

namespace tensortune::cli {

ArgParser ops_parser() {
  ArgParser parser("ops", "ops [--json]",
                   "Lists the operators a workload spec (--workload NAME:key=value,...) may "
                   "name, each with the keys its spec accepts. Every spec takes dtype=float32|"
                   "int32; see docs/cli.md for what each key means.");
  parser.flag("json", "print {operators: [{name, keys}]}");
  return parser;
}

int run_ops(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> p = parse_command_line(ops_parser(), args);
  if (!p)
    return 0;
  support::Json list = support::Json::array();
  for (const std::string& name : te::workload_names()) {
    support::Json op = support::Json::object();
    op["name"] = name;
    support::Json keys = support::Json::array();
    for (const std::string& key : te::workload_keys(name))
      keys.push_back(key);
    op["keys"] = std::move(keys);
    list.push_back(std::move(op));
  }
  if (p->has("json")) {
    support::Json out = support::Json::object();
    out["operators"] = std::move(list);
    std::cout << out.dump() << "\n";
    return 0;
  }
  for (const support::Json& op : list.as_array()) {
    std::string keys;
    for (const support::Json& k : op.at("keys").as_array())
      keys += (keys.empty() ? "" : ", ") + k.as_string();
    std::cout << fmt::format("{:<18} {}\n", op.at("name").as_string(), keys);
  }
  return 0;
}

}  // namespace tensortune::cli
