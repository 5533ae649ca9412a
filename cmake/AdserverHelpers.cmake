# adserver_add_library(<name> SOURCES ... DEPS ...) creates adserver_<name> and adserver::<name>.
# adserver_add_test(<name> [SOURCES ...] DEPS ... LABELS ...) creates a GoogleTest executable
# from tests/<label>/<name>.cc (or the given SOURCES) and registers it with CTest.

function(adserver_set_warnings target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  # Designated initializers that omit fields with defaults are intended (STYLE.md).
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  if(ADSERVER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(ADSERVER_SANITIZE)
    # At the build type's -O0 (Debug): tried -O1 to shorten the suite (2026-11-26), but GCC 12
    # then reports maybe-uninitialized inside libstdc++'s <regex> and the build took longer.
    target_compile_options(${target} PUBLIC -fsanitize=address,undefined -fno-omit-frame-pointer
                                            -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
  if(ADSERVER_FUZZ)
    # Coverage for libFuzzer without its main(); fuzz/ links the targets with -fsanitize=fuzzer.
    # -O1 keeps executions fast and the build short. Line tables are what the sanitizers'
    # reports need (function, file and line of each frame, inlined ones too); full debug info
    # (the Debug build type's -g) cost 5 % more compile time and larger objects to link.
    target_compile_options(${target} PUBLIC -O1 -gline-tables-only -fsanitize=fuzzer-no-link,address,undefined
                                            -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

# Libraries compile as unity batches (CMake's UNITY_BUILD): the headers and the templates their
# files share are parsed and optimised once per batch instead of once per file (issue 35:
# ingest's 11 files took 97 s of CPU at -O3 one by one, 32 s as one batch). A file whose
# anonymous-namespace helpers would collide with a neighbour's is named in the library's
# CMakeLists.txt with SKIP_UNITY_BUILD_INCLUSION. -DADSERVER_UNITY_BUILD=OFF compiles file by file.
option(ADSERVER_UNITY_BUILD "Compile each library's sources in unity batches" ON)
set(ADSERVER_UNITY_BATCH_SIZE 10 CACHE STRING "Sources per unity batch")

function(adserver_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(adserver_${name} STATIC ${ARG_SOURCES})
  set_target_properties(adserver_${name} PROPERTIES UNITY_BUILD ${ADSERVER_UNITY_BUILD}
                        UNITY_BUILD_BATCH_SIZE ${ADSERVER_UNITY_BATCH_SIZE})
  add_library(adserver::${name} ALIAS adserver_${name})
  target_include_directories(adserver_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(adserver_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  adserver_set_warnings(adserver_${name})
endfunction()

# The tests' own sources (the TEST bodies, not the code under test nor tests/support) are
# compiled with ADSERVER_TEST_CXX_FLAGS after the build type's flags: at the Release build's -O3
# they took 950 s of the tree's 1,690 s of compile CPU (docs/testing.md), for code that
# runs a few times. The libraries they test keep the build type's optimisation.
set(ADSERVER_TEST_CXX_FLAGS "-O0" CACHE STRING
    "Extra compile flags for the tests' own sources (empty = the build type's)")

# Labels of a test: those given, plus the module for tests/unit/<module>/ (scripts/test.sh
# --quick selects tests by the modules a change touches).
function(adserver_test_labels out)
  set(labels ${ARGN})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/tests/unit ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT rel MATCHES "^\\.\\." AND NOT rel STREQUAL "")
    string(REGEX REPLACE "/.*" "" module ${rel})
    list(APPEND labels ${module})
  endif()
  list(REMOVE_DUPLICATES labels)
  set(${out} "${labels}" PARENT_SCOPE)
endfunction()

function(adserver_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_SOURCES)
    set(ARG_SOURCES ${name}.cc)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  adserver_set_warnings(${name})
  if(ADSERVER_TEST_CXX_FLAGS)
    separate_arguments(test_flags UNIX_COMMAND "${ADSERVER_TEST_CXX_FLAGS}")
    # Source-file options come after the target's (and the libraries' PUBLIC ones), so they win.
    set_source_files_properties(${ARG_SOURCES} PROPERTIES COMPILE_OPTIONS "${test_flags}")
  endif()
  if(TARGET adserver_test_pch)
    target_precompile_headers(${name} REUSE_FROM adserver_test_pch)
  endif()
  adserver_test_labels(labels ${ARG_LABELS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 600)
endfunction()

# One precompiled header for every test executable (issue 35): GoogleTest, gMock and
# nlohmann-json took ~3 s of gcc's time (4-5 s of clang's) in each of the 120 test sources
# before the test itself was parsed. The header is compiled once, with the flags the tests'
# sources get (the build type's, the warnings, the sanitizers, ADSERVER_TEST_CXX_FLAGS), and
# reused by each test (REUSE_FROM needs identical flags; -Winvalid-pch with -Werror fails the
# build when they drift). -DADSERVER_TEST_PCH=OFF compiles the tests without it.
option(ADSERVER_TEST_PCH "Precompile the tests' common third-party headers once" ON)
# clang writes its inputs' modification times into a precompiled header, so every clone made a
# different .pch, and ccache (which hashes the .pch a source is compiled with) missed every test
# source of the sanitizer tree in every clean clone. Without the times the file is the same for
# the same inputs (checked: two builds after touching the inputs, one checksum).
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(PREPEND CMAKE_CXX_COMPILE_OPTIONS_CREATE_PCH -Xclang -fno-pch-timestamp)
endif()

function(adserver_add_test_pch)
  if(NOT ADSERVER_TEST_PCH)
    return()
  endif()
  add_library(adserver_test_pch STATIC ${PROJECT_SOURCE_DIR}/tests/support/pch/pch.cc)
  target_link_libraries(adserver_test_pch PRIVATE adserver::common GTest::gtest GTest::gmock
                        nlohmann_json::nlohmann_json)
  target_include_directories(adserver_test_pch PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  adserver_set_warnings(adserver_test_pch)
  if(ADSERVER_TEST_CXX_FLAGS)
    # Target-wide here (the generated header source must get them too); after the target's
    # own options, as the tests' per-source flags are after theirs.
    separate_arguments(test_flags UNIX_COMMAND "${ADSERVER_TEST_CXX_FLAGS}")
    target_compile_options(adserver_test_pch PRIVATE ${test_flags})
  endif()
  target_precompile_headers(adserver_test_pch PRIVATE
    <gtest/gtest.h> <gmock/gmock.h> <nlohmann/json.hpp>
    <algorithm> <atomic> <chrono> <filesystem> <fstream> <functional> <map> <memory>
    <optional> <set> <string> <string_view> <thread> <vector>)
endfunction()
