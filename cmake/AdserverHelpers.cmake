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
    # -O1 keeps executions fast and the build short.
    target_compile_options(${target} PUBLIC -O1 -g -fsanitize=fuzzer-no-link,address,undefined
                                            -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

function(adserver_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(adserver_${name} STATIC ${ARG_SOURCES})
  add_library(adserver::${name} ALIAS adserver_${name})
  target_include_directories(adserver_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(adserver_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  adserver_set_warnings(adserver_${name})
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
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600)
endfunction()
