# SPDX-License-Identifier: Apache-2.0
# `cmake --install` into a temporary prefix, then what a user of the installed tree does: an
# outside CMake project (tests/e2e/install/) finds tensortune with find_package and builds the
# README's C++ example (taken from README.md as it is) and the C API example; both run and their
# output is checked. The C example is also built with pkg-config alone; libtensortune.so must
# export only tensortune's symbols; the installed CLI compiles a kernel with its installed runtime.
# usage: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DLIBDIR=lib -P install_test.cmake
# (LIBDIR: the build's CMAKE_INSTALL_LIBDIR)
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(PREFIX ${WORK_DIR}/prefix)

function(run what)
  cmake_parse_arguments(ARG "" "OUTPUT;EXPECT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  if(ARG_EXPECT AND NOT out MATCHES "${ARG_EXPECT}")
    message(FATAL_ERROR "install_test: ${what}: no '${ARG_EXPECT}' in its output:\n${out}")
  endif()
  message(STATUS "install_test: ${what}: ok")
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

run("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
set(LIBDIR ${PREFIX}/${LIBDIR})
foreach(f ${LIBDIR}/libtensortune.so include/tensortune/c_api.h
          include/tensortune/driver/compile.h ${LIBDIR}/cmake/tensortune/tensortuneConfig.cmake
          ${LIBDIR}/pkgconfig/tensortune.pc ${LIBDIR}/tensortune/libtt_runtime.a
          bin/tensortune bin/tensortune-worker share/tensortune/shipped/cpu.db)
  get_filename_component(path ${f} ABSOLUTE BASE_DIR ${PREFIX})
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "install_test: ${path} was not installed")
  endif()
endforeach()

# Exported symbols: tensortune's namespace and tt_* only (no LLVM, XGBoost, SQLite, std).
run("nm -D" COMMAND nm -D --defined-only --format=posix ${LIBDIR}/libtensortune.so OUTPUT symbols)
string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
set(count 0)
foreach(line IN LISTS lines)
  string(REGEX REPLACE " .*" "" name "${line}")
  if(NOT name MATCHES "^(_ZN10tensortune|_ZNK10tensortune|_ZT[ISVT]N10tensortune|_ZTh.*N10tensortune|_ZTv.*N10tensortune|_ZGVN10tensortune|tt_|TENSORTUNE_)")
    message(FATAL_ERROR "install_test: libtensortune.so exports '${name}'")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
message(STATUS "install_test: libtensortune.so exports ${count} symbols, all tensortune's")

# The outside project: the README's C++ example, verbatim, inside main().
file(COPY ${SOURCE_DIR}/tests/e2e/install/ DESTINATION ${WORK_DIR}/project)
file(READ ${SOURCE_DIR}/README.md readme)
string(REGEX MATCH "## A kernel in 15 lines[^`]*```cpp\n([^`]*)```" found "${readme}")
if(NOT found)
  message(FATAL_ERROR "install_test: no C++ example under '## A kernel in 15 lines' in README.md")
endif()
# ";" would split CMake's lists: kept out of them as a placeholder until the file is written.
string(REPLACE ";" "@SEMICOLON@" example "${CMAKE_MATCH_1}")
string(REGEX MATCHALL "[^\n]+" example_lines "${example}")
set(head "#include <cstdio>\n")
set(body "")
foreach(line IN LISTS example_lines)
  if(line MATCHES "^(#include|using namespace)")
    string(APPEND head "${line}\n")
  else()
    string(APPEND body "  ${line}\n")
  endif()
endforeach()
string(REPLACE "@SEMICOLON@" ";" head "${head}")
string(REPLACE "@SEMICOLON@" ";" body "${body}")
file(WRITE ${WORK_DIR}/project/readme_example.cpp "${head}\nint main() {\n${body}
  for (float v : c) {
    if (v != 512.f) {
      std::printf(\"readme_example: c[i] = %g, expected 512\\n\", v);
      return 1;
    }
  }
  std::printf(\"readme_example: all %zu elements of c are 512\\n\", c.size());
  return 0;
}\n")

run("configure the outside project"
    COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/project -B ${WORK_DIR}/project-build
            -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run("build it" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/project-build)
run("the README's C++ example" COMMAND ${WORK_DIR}/project-build/readme_example
    EXPECT "all 262144 elements of c are 512")
file(MAKE_DIRECTORY ${WORK_DIR}/c-cmake)
run("the C API example (CMake)" COMMAND ${WORK_DIR}/project-build/c_api_example ${WORK_DIR}/c-cmake
    EXPECT "shipped logs: ${PREFIX}/share/tensortune/shipped/cpu.db\n.*c_api_example: ok")

# The same C program built with pkg-config alone.
set(ENV{PKG_CONFIG_PATH} ${LIBDIR}/pkgconfig)
run("pkg-config" COMMAND pkg-config --cflags --libs tensortune OUTPUT flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run("cc with pkg-config's flags"
    COMMAND cc -std=c99 -o ${WORK_DIR}/c_api_example_pc ${SOURCE_DIR}/tests/e2e/install/c_api_example.c
            ${flags} -Wl,-rpath,${LIBDIR} -ldl -lm)
file(MAKE_DIRECTORY ${WORK_DIR}/c-pc)
run("the C API example (pkg-config)" COMMAND ${WORK_DIR}/c_api_example_pc ${WORK_DIR}/c-pc
    EXPECT "c_api_example: ok")

# The installed command line, with its installed runtime archive and shipped files.
run("the installed tensortune compile"
    COMMAND ${PREFIX}/bin/tensortune compile --workload matmul:M=32,N=32,K=32 --target native
            --out ${WORK_DIR}/cli --name mm --no-zero-shot
    EXPECT "wrote ${WORK_DIR}/cli/libmm.so")
file(REMOVE_RECURSE ${WORK_DIR})
