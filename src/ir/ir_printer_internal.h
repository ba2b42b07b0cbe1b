// SPDX-License-Identifier: Apache-2.0
// Private to ir_printer*.cpp: the printer state shared by the expression half (ir_printer.cpp)
// and the statement half (ir_printer_stmt.cpp).
#pragma once

#include "tensortune/ir/ir_printer.h"

#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tensortune::ir::printer_detail {

/// Prints one root; names are unique within it, in order of first appearance.
class Printer {
 public:
  std::string str() const { return os_.str(); }
  void print(const Expr& e);
  void print(const Stmt& s);
  void print_func(const LoweredFunc& f);

  /// `e` in parentheses unless its printed form already has them.
  void parenthesised(const Expr& e);

 private:
  const std::string& unique_name(const void* key, const std::string& hint, const char* fallback);
  const std::string& name(const Var& v) { return unique_name(v.get(), v.name(), "v"); }
  const std::string& name(const VarNode* v) { return unique_name(v, v->name, "v"); }
  const std::string& name(const Buffer& b) { return unique_name(b.get(), b.name(), "buf"); }
  void binary(const Expr& a, const char* op, const Expr& b);
  template <class T>
  void infix(const Expr& e, const char* op) {
    binary(e.as<T>()->a, op, e.as<T>()->b);
  }
  /// "fn(arg, arg, ...)" with `close` after the last argument.
  void wrapped(const std::string& fn,
               const std::vector<Expr>& args,
               const std::string& close = ")");
  void indices(const std::vector<Expr>& idx);
  void shape(const std::vector<int64_t>& dims);
  void print_load(const Load* op);
  void print_reduce(const Reduce* op);
  void print_for(const For* op);
  void print_store(const Store* op);
  void print_if(const IfThenElse* op);
  void indent() { os_ << std::string(static_cast<size_t>(depth_) * 2, ' '); }
  void block(const Stmt& body);

  std::ostringstream os_;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
  int depth_ = 0;
};

}  // namespace tensortune::ir::printer_detail
