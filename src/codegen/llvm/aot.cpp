// SPDX-License-Identifier: Apache-2.0
// export_shared_library: LoweredFuncs -> one position-independent object file -> a shared
// library linked by the system C compiler together with tensortune's runtime archive; with a
// model entry point (model_entry.cpp) in the same module when one is given.
#include "codegen/llvm/internal.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/support/file.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <array>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#ifndef TT_RUNTIME_ARCHIVE
#error "TT_RUNTIME_ARCHIVE (the path of libtt_runtime.a in the build tree) must be defined"
#endif

namespace tensortune::codegen {
namespace {

/// A temporary file that is removed when it goes out of scope.
class TempFile {
 public:
  TempFile(const char* prefix, const char* suffix) {
    std::error_code ec = llvm::sys::fs::createTemporaryFile(prefix, suffix, path_);
    TT_USER_CHECK(!ec) << "export_shared_library: cannot create a temporary file: " << ec.message();
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { llvm::sys::fs::remove(path_); }
  std::string path() const { return std::string(path_.str()); }

 private:
  llvm::SmallString<128> path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  TT_USER_CHECK(out.good()) << "export_shared_library: cannot write '" << path << "'";
}

/// The directory of the running executable ("" when /proc/self/exe cannot be read).
std::string executable_dir() {
  std::array<char, 4096> self{};
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) {
    return "";
  }
  return llvm::sys::path::parent_path(llvm::StringRef(self.data(), static_cast<size_t>(n))).str();
}

/// Runs `cc -shared -o path object runtime.a ...`; UserError with the linker's output on failure
/// (`path` is the file written; messages name `shown`, the library the user asked for.)
void link_shared(const std::string& object,
                 const std::string& runtime,
                 const std::string& path,
                 const std::string& shown) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  TT_USER_CHECK(bool(cc)) << "export_shared_library: no system C compiler 'cc' on PATH";
  // The runtime's symbols stay private to the library (its own thread pool), and libstdc++
  // is needed by the runtime's threads. -z defs turns a symbol missing from the runtime into a
  // link error here rather than a dlopen failure in the user's process; no rpath is set, so the
  // library depends on system libraries only.
  // -Bsymbolic: the library's own calls (a model's entry point calling its kernel_i) bind to its
  // own definitions, so two models loaded RTLD_GLOBAL into one process never call each other's
  // kernels (without it, one model's entry point ran another's kernel_0: wrong outputs).
  std::vector<llvm::StringRef> args = {*cc,
                                       "-shared",
                                       "-o",
                                       path,
                                       object,
                                       runtime,
                                       "-Wl,--exclude-libs,ALL",
                                       "-Wl,-Bsymbolic",
                                       "-Wl,-z,defs",
                                       "-lstdc++",
                                       "-lm",
                                       "-lpthread"};
  TempFile log("tensortune-link", "txt");
  std::string log_path = log.path();
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log_path),
                                                llvm::StringRef(log_path)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0, 0, &error);
  if (rc != 0) {
    llvm::sys::fs::remove(path);
    std::ostringstream os;
    os << "export_shared_library: linking '" << shown << "' failed (cc exit status " << rc << ")";
    if (!error.empty()) {
      os << ": " << error;
    }
    os << "\n" << read_file(log_path);
    throw UserError(os.str());
  }
}

/// NAME_set_num_threads and NAME_get_num_threads (SharedLibraryOptions::threads_prefix): calls
/// of the library's own copy of the runtime's tt_set_num_threads and tt_get_num_threads.
void add_thread_setters(llvm::Module& module,
                        const std::vector<ir::LoweredFunc>& funcs,
                        const std::string& prefix) {
  const std::string set_name = prefix + "_set_num_threads";
  const std::string get_name = prefix + "_get_num_threads";
  for (const ir::LoweredFunc& f : funcs) {
    TT_USER_CHECK(f.name != set_name && f.name != get_name)
        << "export_shared_library: function '" << f.name
        << "' has the name of the library's thread-count function";
  }
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::FunctionType* set_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {i32}, false);
  llvm::FunctionType* get_type = llvm::FunctionType::get(i32, {}, false);
  llvm::FunctionCallee runtime_set = module.getOrInsertFunction("tt_set_num_threads", set_type);
  llvm::FunctionCallee runtime_get = module.getOrInsertFunction("tt_get_num_threads", get_type);
  llvm::Function* set =
      llvm::Function::Create(set_type, llvm::Function::ExternalLinkage, set_name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", set));
  b.CreateCall(runtime_set, {set->getArg(0)});
  b.CreateRetVoid();
  llvm::Function* get =
      llvm::Function::Create(get_type, llvm::Function::ExternalLinkage, get_name, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", get));
  b.CreateRet(b.CreateCall(runtime_get, {}));
}

/// export_shared_library with `options` (a model entry point, thread-count functions).
void write_library(const std::vector<ir::LoweredFunc>& funcs,
                   const target::Target& target,
                   const std::string& path,
                   const SharedLibraryOptions& options) {
  TT_USER_CHECK(!funcs.empty()) << "export_shared_library: no functions to export to '" << path
                                << "'";
  std::string runtime = find_runtime_archive(options.runtime_archive);
  const ModelEntry* entry = options.entry;
  detail::LlvmTarget t = detail::llvm_target(target);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, true);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module =
      detail::generate_module(funcs, t, tm->createDataLayout(), ctx);
  if (entry != nullptr) {
    detail::add_model_entry(*module, *entry, funcs, t);
  }
  if (!options.threads_prefix.empty()) {
    add_thread_setters(*module, funcs, options.threads_prefix);
  }
  if (entry != nullptr || !options.threads_prefix.empty()) {
    detail::verify_module(*module);
  }
  detail::optimize_module(*module, *tm);
  std::string object_code = detail::emit_machine_code(*module, *tm, false);
  // Linked under a temporary name beside `path`, then renamed over it: a library a running
  // process has loaded is replaced, never rewritten under it (that process would die of SIGBUS),
  // and a failed link leaves the previous library as it was. AtomicOutput creates the temporary
  // file exclusively first (a link planted under its name is never followed), which also fails
  // early, with a clear message, when the folder cannot be written or `path` is a link or node.
  support::AtomicOutput library(path, "export_shared_library");
  TempFile object("tensortune", "o");
  write_file(object.path(), object_code);
  link_shared(object.path(), runtime, library.temp_path(), path);
  library.commit();
}

}  // namespace

std::string find_runtime_archive(const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    TT_USER_CHECK(llvm::sys::fs::is_regular_file(explicit_path))
        << "export_shared_library: the runtime archive '" << explicit_path << "' does not exist";
    return explicit_path;
  }
  std::vector<std::string> tried;
  if (const std::string lib = support::loaded_binary_dir(); !lib.empty()) {
    // An installed libtensortune.so: LIBDIR/tensortune/libtt_runtime.a beside it.
    tried.push_back(lib + "/tensortune/libtt_runtime.a");
    tried.push_back(lib + "/libtt_runtime.a");
  }
  std::string dir = executable_dir();
  if (!dir.empty()) {
    // Beside the binary (a copy made by the build), then an installed layout: PREFIX/bin and
    // PREFIX/lib/tensortune or PREFIX/lib.
    for (const char* relative :
         {"/libtt_runtime.a", "/../lib/tensortune/libtt_runtime.a", "/../lib/libtt_runtime.a"}) {
      tried.push_back(dir + relative);
    }
  }
  tried.emplace_back(TT_RUNTIME_ARCHIVE);  // the build tree this library was compiled in
  for (const std::string& candidate : tried) {
    if (llvm::sys::fs::is_regular_file(candidate)) {
      return candidate;
    }
  }
  std::string list;
  for (const std::string& candidate : tried) {
    list += (list.empty() ? "" : ", ") + candidate;
  }
  throw UserError(
      "export_shared_library: tensortune's runtime archive libtt_runtime.a was not "
      "found (tried " +
      list +
      "); give its path (TT_RUNTIME_ARCHIVE for the "
      "tensortune command)");
}

void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path) {
  export_shared_library(funcs, target, path, "");
}

void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const std::string& runtime_archive) {
  write_library(funcs, target, path, SharedLibraryOptions{runtime_archive, nullptr, ""});
}

void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const std::string& runtime_archive,
                           const ModelEntry& entry) {
  write_library(funcs, target, path, SharedLibraryOptions{runtime_archive, &entry, ""});
}

void export_shared_library(const std::vector<ir::LoweredFunc>& funcs,
                           const target::Target& target,
                           const std::string& path,
                           const SharedLibraryOptions& options) {
  write_library(funcs, target, path, options);
}

}  // namespace tensortune::codegen

namespace tensortune::codegen {
namespace {

/// `RET NAME(ARGS...) { return RUNTIME(PREFIX..., ARGS...); }`: an exported entry point that
/// calls the runtime's copy (whose own symbols the library keeps private).
void add_forwarder(llvm::Module& module,
                   const detail::LlvmTarget& t,
                   const char* name,
                   const char* runtime_name,
                   llvm::FunctionType* type,
                   const std::vector<llvm::Value*>& prefix = {}) {
  std::vector<llvm::Type*> runtime_params;
  for (llvm::Value* v : prefix)
    runtime_params.push_back(v->getType());
  for (llvm::Type* p : type->params())
    runtime_params.push_back(p);
  llvm::FunctionCallee runtime = module.getOrInsertFunction(
      runtime_name, llvm::FunctionType::get(type->getReturnType(), runtime_params, false));
  llvm::Function* fn = detail::new_entry_function(module, t, name, type);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  std::vector<llvm::Value*> args(prefix);
  for (llvm::Argument& a : fn->args())
    args.push_back(&a);
  llvm::CallInst* call = b.CreateCall(runtime, args);
  if (type->getReturnType()->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateRet(call);
}

}  // namespace

void export_cuda_model_library(const runtime::CudaModelImage& image,
                               const ModelEntry& sizes,
                               const target::Target& host,
                               const std::string& path,
                               const std::string& runtime_archive) {
  TT_USER_CHECK(!host.is_gpu()) << "export_cuda_model_library: the library's host code needs a "
                                   "CPU target, not '"
                                << host.to_string() << "'";
  const std::string text = image.serialize();
  std::string runtime = find_runtime_archive(runtime_archive);
  detail::LlvmTarget t = detail::llvm_target(host);
  std::unique_ptr<llvm::TargetMachine> tm = detail::create_target_machine(t, true);
  llvm::LLVMContext ctx;
  auto module = std::make_unique<llvm::Module>("tensortune_cuda_model", ctx);
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  detail::add_model_sizes(*module, t, sizes);
  llvm::Constant* data = llvm::ConstantDataArray::getString(ctx, text, true);
  auto* image_data =
      new llvm::GlobalVariable(*module, data->getType(), true, llvm::GlobalValue::PrivateLinkage,
                               data, "tt_model_cuda_image_text");
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Constant* text_bytes = llvm::ConstantInt::get(i64, text.size());
  add_forwarder(*module, t, kModelCudaOpen, "tt_cuda_model_open",
                llvm::FunctionType::get(ptr, {ptr, i32, ptr, i64}, false),
                {image_data, text_bytes});
  add_forwarder(*module, t, kModelCudaRun, "tt_cuda_model_run",
                llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  add_forwarder(*module, t, kModelCudaRunDevice, "tt_cuda_model_run_device",
                llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  add_forwarder(*module, t, kModelCudaTime, "tt_cuda_model_time",
                llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr, ptr}, false));
  add_forwarder(*module, t, kModelCudaDeviceBytes, "tt_cuda_model_device_bytes",
                llvm::FunctionType::get(i64, {ptr}, false));
  add_forwarder(*module, t, kModelCudaLaunches, "tt_cuda_model_launches",
                llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr}, false));
  add_forwarder(*module, t, kModelCudaError, "tt_cuda_model_error",
                llvm::FunctionType::get(ptr, {ptr}, false));
  add_forwarder(*module, t, kModelCudaClose, "tt_cuda_model_close",
                llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));
  // const char* tt_model_cuda_image(int64_t* bytes): the text and its size (without the NUL).
  llvm::Function* get = detail::new_entry_function(*module, t, kModelCudaImage,
                                                   llvm::FunctionType::get(ptr, {ptr}, false));
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", get));
  llvm::BasicBlock* store = llvm::BasicBlock::Create(ctx, "store", get);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", get);
  b.CreateCondBr(b.CreateIsNotNull(get->getArg(0)), store, done);
  b.SetInsertPoint(store);
  b.CreateAlignedStore(text_bytes, get->getArg(0), llvm::Align(8));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRet(image_data);
  detail::verify_module(*module);
  detail::optimize_module(*module, *tm);
  std::string object_code = detail::emit_machine_code(*module, *tm, false);
  support::AtomicOutput library(path, "export_cuda_model_library");
  TempFile object("tensortune", "o");
  write_file(object.path(), object_code);
  link_shared(object.path(), runtime, library.temp_path(), path);
  library.commit();
}

}  // namespace tensortune::codegen
