// SPDX-License-Identifier: Apache-2.0
// The C header of an exported library: element types, names, the buffer table, and that a C
// compiler accepts it.
#include "tensortune/driver/c_header.h"

#include "tensortune/lower/lower.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace tensortune::driver {
namespace {

ir::LoweredFunc lowered(const std::string& spec) {
  te::Workload w = te::make_workload(spec);
  return lower::lower(w, schedule::Schedule{w.key(), {}}, target::Target::parse("llvm"));
}

TEST(CType, MapsScalarTypesAndRejectsTheRest) {
  EXPECT_EQ(c_type(ir::DataType::float32()), "float");
  EXPECT_EQ(c_type(ir::DataType::float64()), "double");
  EXPECT_EQ(c_type(ir::DataType::int32()), "int32_t");
  EXPECT_EQ(c_type(ir::DataType(ir::DataType::Code::UInt, 8)), "uint8_t");
  EXPECT_EQ(c_type(ir::DataType::bfloat16()), "uint16_t");
  EXPECT_THROW(c_type(ir::DataType::float32(8)), UserError);
  EXPECT_THROW(c_type(ir::DataType::boolean()), UserError);
}

TEST(IsCIdentifier, AcceptsIdentifiersOnly) {
  EXPECT_TRUE(is_c_identifier("matmul_64x48x32_float32"));
  EXPECT_TRUE(is_c_identifier("_k1"));
  EXPECT_FALSE(is_c_identifier(""));
  for (const char* keyword : {"int", "float", "class", "restrict", "_Bool", "int32_t"})
    EXPECT_FALSE(is_c_identifier(keyword)) << keyword;  // the header would not compile
  EXPECT_TRUE(is_c_identifier("int8"));
  EXPECT_FALSE(is_c_identifier("1k"));
  EXPECT_FALSE(is_c_identifier("my-kernel"));
  EXPECT_FALSE(is_c_identifier("a b"));
}

TEST(SymbolCollision, NamesMainTheRuntimeTheModelEntryAndTheCLibrary) {
  EXPECT_EQ(symbol_collision("main"), "the program's entry point 'main'");
  EXPECT_EQ(symbol_collision("tt_model_run"), "the model entry point's symbol 'tt_model_run'");
  EXPECT_EQ(symbol_collision("tt_alloc"), "tensortune's runtime function 'tt_alloc'");
  EXPECT_EQ(symbol_collision("expf"), "the C library's function 'expf'");
  EXPECT_EQ(symbol_collision("matmul_64x48x32_float32"), "");
  EXPECT_EQ(symbol_collision("mains"), "");
}

TEST(CHeader, AKernelWithPrepackedWeightsDeclaresItsPrepareFunction) {
  te::Workload w = te::make_workload("conv2d:N=1,C=3,H=6,W=5,K=8,R=3,S=3,pad=1");
  ir::LoweredFunc f = lower::lower(
      w,
      schedule::Schedule{w.key(),
                         {schedule::CacheRead{"weight", ir::MemoryScope::Local, {}, {{0, 4}}}}},
      target::Target::parse("llvm"));
  ASSERT_EQ(f.prepacked.size(), 1U);
  std::string h = c_header({f}, "kernels");
  EXPECT_NE(
      h.find("buffers[3]  prepacked float weight.local[2, 3, 3, 3, 4]  (float32, 216 elements)"),
      std::string::npos)
      << h;
  EXPECT_NE(h.find("int32_t " + f.name + "(void* const* buffers);\nint32_t " + f.name +
                   "_prepare(void* const* buffers);"),
            std::string::npos)
      << h;
}

TEST(CHeader, DeclaresEachFunctionWithItsBufferTable) {
  ir::LoweredFunc mm = lowered("matmul:M=64,N=48,K=32");
  ir::LoweredFunc relu = lowered("relu:M=4,N=5,dtype=int32");
  std::string h = c_header({mm, relu}, "kernels", {"schedule: record #3", "schedule: default"});
  EXPECT_NE(h.find("#ifndef TENSORTUNE_KERNELS_H_"), std::string::npos);
  EXPECT_NE(h.find("#include <stdint.h>"), std::string::npos);
  EXPECT_NE(h.find("extern \"C\" {"), std::string::npos);
  EXPECT_NE(h.find("int32_t matmul_64x48x32_float32(void* const* buffers);"), std::string::npos);
  EXPECT_NE(h.find("int32_t relu_4x5_int32(void* const* buffers);"), std::string::npos) << h;
  EXPECT_NE(h.find("buffers[0]  input   float A[64, 32]  (float32, 2048 elements)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("buffers[1]  input   float B[32, 48]"), std::string::npos) << h;
  EXPECT_NE(h.find("buffers[2]  output  float C[64, 48]  (float32, 3072 elements)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("int32_t"), std::string::npos);
  EXPECT_NE(h.find("schedule: record #3"), std::string::npos);
  EXPECT_THROW(c_header({mm}, "bad-name"), UserError);
}

/// A model of one relu kernel: its entry point and tensors.
ModelDecl relu_model(const ir::LoweredFunc& relu) {
  ModelDecl m;
  m.entry.calls = {
      {relu.name, {{codegen::EntryArg::Kind::Input, 0}, {codegen::EntryArg::Kind::Output, 0}}}};
  m.entry.input_bytes = {80};
  m.entry.output_bytes = {80};
  m.entry.arena_bytes = 128;
  m.entry.weight_bytes = 64;
  m.inputs = {TensorDecl{"image", ir::DataType::int32(), {4, 5}}};
  m.outputs = {TensorDecl{"*/y", ir::DataType::int32(), {4, 5}}};
  return m;
}

TEST(CHeader, AModelDeclaresItsEntryPointAndHowToCallIt) {
  ir::LoweredFunc relu = lowered("relu:M=4,N=5,dtype=int32");
  ModelDecl model = relu_model(relu);
  std::string h = c_header({relu}, "model", {}, &model);
  for (const char* line :
       {"int32_t tt_model_run(void* const* inputs, void* const* outputs, void* arena, const void* "
        "weights);",
        "int64_t tt_model_arena_bytes(void);", "int64_t tt_model_weight_bytes(void);",
        "int32_t tt_model_num_inputs(void);", "int64_t tt_model_output_bytes(int32_t i);",
        " *   inputs[0]   int32_t image[4, 5]  (int32, 20 elements)",
        " *   outputs[0]  int32_t * /y[4, 5]", "the 64 bytes of weights.bin (beside model.so)",
        "arena: 128 bytes", "fread(weights, 1, tt_model_weight_bytes(), f);",
        "tt_model_run(inputs, outputs, arena, weights);"}) {
    EXPECT_NE(h.find(line), std::string::npos) << line << "\n" << h;
  }
  // The entry point follows the kernels it calls.
  EXPECT_LT(h.find("int32_t relu_4x5_int32("), h.find("int32_t tt_model_run("));
  EXPECT_EQ(c_header({relu}, "model").find("tt_model_run"), std::string::npos);
}

TEST(CHeader, CompilesAsCAndCxx) {
  if (std::system("cc --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no system C compiler";
  }
  std::string path = std::filesystem::temp_directory_path().string() + "/tensortune_header_" +
                     std::to_string(::getpid()) + ".h";
  ir::LoweredFunc relu = lowered("relu:M=4,N=5,dtype=int32");
  ModelDecl model = relu_model(relu);
  std::ofstream(path) << c_header({lowered("matmul:M=4,N=4,K=4"), relu}, "kernels", {}, &model);
  for (const char* lang : {"c", "c++"}) {
    std::string command = std::string("cc -fsyntax-only -Wall -Werror -x ") + lang + " '" + path +
                          "' > /dev/null 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tensortune::driver
