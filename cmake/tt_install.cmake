# SPDX-License-Identifier: Apache-2.0
# libtensortune.so (every module and the C API in one shared library, only tensortune's own
# symbols exported) and the install rules: headers, library, runtime archive, CLI and worker,
# shipped files, CMake package and pkg-config file. See docs/c_api.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TT_LIBRARY_MODULES support ir target te schedule lower runtime codegen measure database
                       cost_model search driver graph capi)
set(TT_LIBRARY_OBJECTS "")
set(TT_LIBRARY_ARCHIVES "")
foreach(m IN LISTS TT_LIBRARY_MODULES)
  list(APPEND TT_LIBRARY_OBJECTS $<TARGET_OBJECTS:tt_${m}>)
  list(APPEND TT_LIBRARY_ARCHIVES tt_${m})
endforeach()
# The modules' objects are the library's sources; linking their archives as well brings their
# third-party libraries (LLVM, SQLite, XGBoost, ONNX, fmt), privately.
# The target is tensortune_shared (the CLI is `tensortune`); the file and the exported name are
# tensortune.
add_library(tensortune_shared SHARED ${TT_LIBRARY_OBJECTS})
target_link_libraries(tensortune_shared PRIVATE ${TT_LIBRARY_ARCHIVES})
target_include_directories(tensortune_shared INTERFACE
                           $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(tensortune_shared INTERFACE cxx_std_17)
set(TT_VERSION_SCRIPT ${PROJECT_SOURCE_DIR}/cmake/tensortune.map)
target_link_options(tensortune_shared PRIVATE "LINKER:--version-script=${TT_VERSION_SCRIPT}")
# -z defs proves every symbol resolves inside the library or its dependencies; a sanitizer build
# (scripts/sanitize.sh) leaves the sanitizer runtime's symbols to the executable, so not there.
if(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  target_link_options(tensortune_shared PRIVATE "LINKER:-z,defs")
endif()
# 0.x: any minor release may change the ABI, so the SONAME carries major.minor.
set_target_properties(tensortune_shared PROPERTIES
  OUTPUT_NAME tensortune
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${TT_VERSION_SCRIPT}
  EXPORT_NAME tensortune
  INSTALL_RPATH_USE_LINK_PATH ON)
add_library(tensortune::tensortune ALIAS tensortune_shared)

set(TT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tensortune)
install(TARGETS tensortune_shared EXPORT tensortuneTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tensortune
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
# What `compile` links into every exported library (codegen::find_runtime_archive looks for it
# in LIBDIR/tensortune beside libtensortune.so and beside the installed CLI).
install(FILES $<TARGET_FILE:tt_runtime> DESTINATION ${CMAKE_INSTALL_LIBDIR}/tensortune)
# The CLI and its worker side by side (the measurer starts the worker found beside it).
install(TARGETS tensortune tensortune-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The shipped zero-shot model and tuning logs: BINDIR/../share/tensortune/ is where the CLI
# (tools/tensortune/zero_shot_cli.cpp) and tt_shipped_logs_path look first.
install(FILES ${PROJECT_SOURCE_DIR}/tuning_logs/shipped/cpu.db
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tensortune/shipped)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tuning_logs/zero_shot
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tensortune FILES_MATCHING PATTERN "*.json")

install(EXPORT tensortuneTargets NAMESPACE tensortune:: DESTINATION ${TT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensortuneConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tensortuneConfig.cmake
                              INSTALL_DESTINATION ${TT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensortuneConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensortuneConfig.cmake
              ${PROJECT_BINARY_DIR}/tensortuneConfigVersion.cmake
        DESTINATION ${TT_CMAKE_DIR})
file(RELATIVE_PATH TT_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tensortune.pc.in ${PROJECT_BINARY_DIR}/tensortune.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensortune.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
