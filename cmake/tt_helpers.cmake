# SPDX-License-Identifier: Apache-2.0
# tt_add_module(): one static library per module; tt_add_unit_test(): one gtest binary per module.

# tt_add_module(NAME SOURCES... DEPS modules... [EXTERNAL libs...])
function(tt_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;EXTERNAL" ${ARGN})
  if(NOT ARG_SOURCES)
    # A module still being written: keep the graph valid with an empty translation unit.
    set(empty ${CMAKE_CURRENT_BINARY_DIR}/tt_${name}_empty.cpp)
    file(WRITE ${empty} "// empty module\n")
    set(ARG_SOURCES ${empty})
  endif()
  add_library(tt_${name} STATIC ${ARG_SOURCES})
  target_include_directories(tt_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                        PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(tt_${name} PRIVATE ${TT_WARNINGS})
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(tt_${name} PUBLIC tt_${dep})
  endforeach()
  if(ARG_EXTERNAL)
    target_link_libraries(tt_${name} PRIVATE ${ARG_EXTERNAL})
  endif()
endfunction()

# tt_add_unit_test(NAME SOURCES... DEPS targets... [LABELS labels...])
function(tt_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                             ${PROJECT_SOURCE_DIR}/tests)
  target_compile_options(${name} PRIVATE ${TT_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest_main)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${name}
    # One variable per ENVIRONMENT word: gtest_discover_tests splits a ";" list into properties.
    PROPERTIES LABELS "${ARG_LABELS}"
               ENVIRONMENT "OMP_WAIT_POLICY=passive"
               ENVIRONMENT_MODIFICATION "TT_SOURCE_DIR=set:${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()
