// SPDX-License-Identifier: Apache-2.0
// The statement half of the canonical text printer: one statement per line, two spaces of indent
// per level, braces around loop, allocation, branch and let bodies (grammar in ir_printer.h).
#include "ir_printer_internal.h"

namespace tensortune::ir::printer_detail {
namespace {

const char* scope_name(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::Global:
      return "global";
    case MemoryScope::Local:
      return "local";
    case MemoryScope::Shared:
      return "shared";
  }
  return "?";
}

}  // namespace

void Printer::block(const Stmt& body) {
  os_ << " {\n";
  ++depth_;
  print(body);
  --depth_;
  indent();
  os_ << "}\n";
}

void Printer::print_for(const For* op) {
  indent();
  os_ << "for (" << name(op->var) << ", ";
  print(op->min);
  os_ << ", ";
  print(op->extent);
  os_ << ")";
  if (op->for_kind != ForKind::Serial) {
    os_ << " " << for_kind_name(op->for_kind);
  }
  if (op->auto_unroll_max_step > 0) {
    os_ << " auto_unroll(" << op->auto_unroll_max_step << ")";
  }
  block(op->body);
}

void Printer::print_store(const Store* op) {
  indent();
  os_ << name(op->buffer);
  indices(op->indices);
  os_ << " = ";
  print(op->value);
  if (op->predicate.defined()) {
    os_ << " if ";
    parenthesised(op->predicate);
  }
  os_ << "\n";
}

void Printer::print_if(const IfThenElse* op) {
  indent();
  os_ << "if ";
  parenthesised(op->condition);
  os_ << " {\n";
  ++depth_;
  print(op->then_case);
  --depth_;
  indent();
  if (op->else_case.defined()) {
    os_ << "} else";
    block(op->else_case);
    return;
  }
  os_ << "}\n";
}

void Printer::print(const Stmt& s) {
  if (!s.defined()) {
    indent();
    os_ << "<undefined>\n";
    return;
  }
  switch (s.kind()) {
    case StmtKind::For:
      return print_for(s.as<For>());
    case StmtKind::Store:
      return print_store(s.as<Store>());
    case StmtKind::Allocate: {
      const auto* op = s.as<Allocate>();
      indent();
      os_ << "allocate " << op->buffer.dtype().to_string() << " " << name(op->buffer);
      shape(op->buffer.shape());
      os_ << " " << scope_name(op->buffer.scope());
      return block(op->body);
    }
    case StmtKind::IfThenElse:
      return print_if(s.as<IfThenElse>());
    case StmtKind::Seq:
      for (const Stmt& child : s.as<Seq>()->stmts) {
        print(child);
      }
      return;
    case StmtKind::Evaluate:
      indent();
      os_ << "evaluate(";
      print(s.as<Evaluate>()->value);
      os_ << ")\n";
      return;
    case StmtKind::LetStmt: {
      const auto* op = s.as<LetStmt>();
      indent();
      os_ << "let " << name(op->var) << " = ";
      print(op->value);
      return block(op->body);
    }
  }
}

void Printer::print_func(const LoweredFunc& f) {
  os_ << "func " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.params[i];
    os_ << (i == 0 ? "" : ", ") << (i >= f.num_inputs ? "out " : "") << b.dtype().to_string() << " "
        << name(b);
    shape(b.shape());
  }
  for (const Buffer& b : f.prepacked) {
    os_ << ", prepacked " << b.dtype().to_string() << " " << name(b);
    shape(b.shape());
  }
  os_ << ")";
  block(f.body);
  if (f.prepare.defined()) {
    os_ << "\nprepare " << f.name << "_prepare";
    block(f.prepare);
  }
}

}  // namespace tensortune::ir::printer_detail
