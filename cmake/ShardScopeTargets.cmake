# Interface targets that carry build policy: every ShardScope target links
# shardscope::options; nothing is set directory-wide.
add_library(shardscope_options INTERFACE)
add_library(shardscope::options ALIAS shardscope_options)
target_compile_features(shardscope_options INTERFACE cxx_std_20)

add_library(shardscope_warnings INTERFACE)
add_library(shardscope::warnings ALIAS shardscope_warnings)
target_compile_options(shardscope_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
     -Wcast-align -Wunused -Woverloaded-virtual -Wdouble-promotion -Wformat=2
     -Wimplicit-fallthrough>
  $<$<AND:$<BOOL:${SHARDSCOPE_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>>:-Werror>)

add_library(shardscope_sanitizers INTERFACE)
add_library(shardscope::sanitizers ALIAS shardscope_sanitizers)
# -O1: the sanitized suite runs in CI beside the Release one; unoptimised it is about 8 times
# slower than Release, at -O1 a fraction of that, with the same reports.
if(SHARDSCOPE_SANITIZE)
  target_compile_options(shardscope_sanitizers INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(shardscope_sanitizers INTERFACE -fsanitize=address,undefined)
  # GCC's -Wmaybe-uninitialized is unreliable under -fsanitize (its own documentation says so):
  # at -O1 it fires inside libstdc++'s <regex> and <functional>. The Release build keeps it.
  target_compile_options(shardscope_sanitizers INTERFACE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-maybe-uninitialized>)
endif()
# Fuzzing: everything instrumented for coverage and the sanitizers; only the fuzz targets link
# libFuzzer's main (tests/fuzz).
if(SHARDSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SHARDSCOPE_FUZZ needs clang (the fuzz preset sets clang++-14)")
  endif()
  target_compile_options(shardscope_sanitizers INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(shardscope_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
target_link_libraries(shardscope_options INTERFACE shardscope_warnings shardscope_sanitizers)

# Note: the project's libraries are static (one self-contained worker binary to copy to a cluster
# node), except where SHARDSCOPE_SHARED_LIBS asks for shared ones. The asan preset does: statically
# linked, each of its ~70 test executables carried its own copy of every library's instrumented
# code and debug info (about 200 MB apiece, 10 GB a build tree, more than a CI machine's disk
# holds); shared, each library is there once. The preset also keeps line tables only (-g1), all a
# sanitizer's report needs for its file:line stacks.
if(SHARDSCOPE_SHARED_LIBS)
  set(SHARDSCOPE_LIBRARY_TYPE SHARED)
else()
  set(SHARDSCOPE_LIBRARY_TYPE STATIC)
endif()

# shardscope_add_library(name SOURCES ... ) — one library per backend folder; includes are
# rooted at backend/ so code says #include "core/ledger.h".
function(shardscope_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${name} ${SHARDSCOPE_LIBRARY_TYPE} ${ARG_SOURCES})
  add_library(shardscope::${name} ALIAS ${name})
  set_property(GLOBAL APPEND PROPERTY SHARDSCOPE_LIBRARIES ${name})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/backend)
  target_link_libraries(${name} PRIVATE shardscope::options)
  target_compile_features(${name} PUBLIC cxx_std_20)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
