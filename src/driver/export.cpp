// SPDX-License-Identifier: Apache-2.0
// Compiler::export_library: the looked-up kernels of several workloads as one shared library
// (DIR/NAME.so), with a model's entry point when one is given, and the C header that documents
// how to call them (DIR/NAME.h).
#include "driver/export_files.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/driver/c_header.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

namespace tensortune::driver {
namespace detail {

void make_directory(const std::string& dir) {
  TT_USER_CHECK(!dir.empty()) << "export: the output directory is empty";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  TT_USER_CHECK(!ec) << "export: cannot create the output directory '" << dir
                     << "': " << ec.message();
  TT_USER_CHECK(std::filesystem::is_directory(dir, ec))
      << "export: the output path '" << dir << "' is not a directory";
}

void write_text(const std::string& path, const std::string& text) {
  support::write_file_atomically(path, text, "export");
}

void link_old_name(const std::string& path, const std::string& target) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::symlink_status(path, ec);
  if (std::filesystem::is_symlink(status) &&
      std::filesystem::read_symlink(path, ec).string() == target) {
    return;
  }
  // A library of an older export (a regular file) or a link elsewhere is replaced by the link; a
  // directory or a device is left alone.
  TT_USER_CHECK(!std::filesystem::exists(status) || std::filesystem::is_regular_file(status) ||
                std::filesystem::is_symlink(status))
      << "export: '" << path << "' exists and is neither a file nor a link; remove it";
  const std::string temp = path + ".tmp-link";
  std::filesystem::remove(temp, ec);
  std::filesystem::create_symlink(target, temp, ec);
  TT_USER_CHECK(!ec) << "export: cannot create the link '" << path << "': " << ec.message();
  std::filesystem::rename(temp, path, ec);
  TT_USER_CHECK(!ec) << "export: cannot create the link '" << path << "': " << ec.message();
}

}  // namespace detail

ExportedLibrary Compiler::export_library(const std::vector<ExportItem>& items,
                                         const std::string& dir,
                                         const std::string& name,
                                         const std::string& runtime_archive) {
  TT_USER_CHECK(!items.empty()) << "export: no workloads to export";
  TT_USER_CHECK(is_c_identifier(name))
      << "export: library name '" << name << "' is not a C identifier";
  return write_library(items, lower_items(items), dir, name, runtime_archive);
}

std::vector<Compiled> Compiler::lower_items(const std::vector<ExportItem>& items) {
  TT_USER_CHECK(!items.empty()) << "export: no workloads to export";
  std::vector<Compiled> lowered;
  std::set<std::string> names;
  for (const ExportItem& item : items) {
    TT_USER_CHECK(item.name.empty() || is_c_identifier(item.name))
        << "export: function name '" << item.name << "' is not a C identifier";
    const std::string collision = symbol_collision(item.name);
    TT_USER_CHECK(collision.empty()) << "export: function name '" << item.name
                                     << "' would collide with " << collision << "; choose another";
    Compiled compiled = lower_kernel(item.workload, item.spec, item.name);
    TT_USER_CHECK(names.insert(compiled.func.name).second)
        << "export: two functions are named '" << compiled.func.name << "'";
    lowered.push_back(std::move(compiled));
  }
  return lowered;
}

ExportedLibrary Compiler::write_library(const std::vector<ExportItem>& items,
                                        std::vector<Compiled> lowered,
                                        const std::string& dir,
                                        const std::string& name,
                                        const std::string& runtime_archive,
                                        const ModelDecl* model) {
  TT_CHECK(items.size() == lowered.size()) << "export: one lowered kernel per item";
  // Before the output folder is made: a GPU target left an empty one behind.
  TT_USER_CHECK(!resolved_.is_gpu())
      << "export: target '" << resolved_.to_string()
      << "' is a GPU target; shared libraries and models are built for CPU targets (single "
         "CUDA kernels are exported by `tensortune compile --target cuda ...`)";
  TT_USER_CHECK(!items.empty()) << "export: no workloads to export";
  TT_USER_CHECK(is_c_identifier(name))
      << "export: library name '" << name << "' is not a C identifier";
  detail::make_directory(dir);
  ExportedLibrary library;
  std::filesystem::path base = std::filesystem::path(dir) / name;
  library.library_path = (std::filesystem::path(dir) / ("lib" + name + ".so")).string();
  library.header_path = base.string() + ".h";
  std::vector<ir::LoweredFunc> funcs;
  std::vector<std::string> notes;
  for (size_t i = 0; i < items.size(); ++i) {
    funcs.push_back(lowered[i].func);
    notes.push_back("workload " + items[i].workload.name() +
                    "; schedule: " + lowered[i].lookup.describe());
  }
  library.functions = std::move(lowered);
  // c_header checks the names before anything is written.
  std::string header = c_header(funcs, name, notes, model);
  codegen::export_shared_library(
      funcs, resolved_, library.library_path,
      codegen::SharedLibraryOptions{runtime_archive, model == nullptr ? nullptr : &model->entry,
                                    name});
  detail::link_old_name(base.string() + ".so", "lib" + name + ".so");
  detail::write_text(library.header_path, header);
  return library;
}

}  // namespace tensortune::driver
