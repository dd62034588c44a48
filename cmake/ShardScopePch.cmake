# Precompiled headers: the headers nearly every translation unit of a group parses (the standard
# library, nlohmann/json, GoogleTest, Qt and QCustomPlot) are compiled once per group instead of
# once per file. Three groups, each with one owner target whose PCH the group's targets reuse:
#   backend — the JSON-heavy backend libraries (static, position-independent)
#   gtest   — the GoogleTest executables (unit, mpi, gpu tests)
#   qtest   — the Qt GUI test executables
# shardscope_widgets precompiles its own (it builds with QT_NO_KEYWORDS / QT_NO_CAST_FROM_ASCII,
# which the Qt headers read, so its PCH cannot be shared with the tests).
#
# Note: a reused PCH is valid only when the reusing target compiles with the owner's flags
# (optimisation, sanitizers, -fPIC) and defines nothing the headers read; GCC silently falls
# back to parsing the headers otherwise, clang refuses to compile. So the owners link exactly what
# their group links (shardscope::options, the same packages), groups are split by -fPIC, and PCHs
# are used with GCC only (the fuzz preset builds with clang).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  option(SHARDSCOPE_PCH "Precompile the heavy headers (GCC)" ON)
else()
  set(SHARDSCOPE_PCH OFF)
endif()

set(shardscope_pch_std <algorithm> <array> <chrono> <cstdint> <filesystem> <functional> <map>
    <memory> <optional> <span> <string> <string_view> <unordered_map> <vector>)

# shardscope_pch_owner(kind LIBS …): the owner target of a group (one empty source).
function(shardscope_pch_owner kind)
  if(NOT SHARDSCOPE_PCH)
    return()
  endif()
  cmake_parse_arguments(ARG "PIC" "" "LIBS;HEADERS" ${ARGN})
  set(src ${PROJECT_BINARY_DIR}/generated/pch_${kind}.cpp)
  file(WRITE ${src} "// The owner of the ${kind} precompiled header (cmake/ShardScopePch.cmake).\n")
  add_library(shardscope_pch_${kind} STATIC ${src})
  target_link_libraries(shardscope_pch_${kind} PRIVATE shardscope::options ${ARG_LIBS})
  target_compile_features(shardscope_pch_${kind} PRIVATE cxx_std_20)
  if(ARG_PIC)
    set_target_properties(shardscope_pch_${kind} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_precompile_headers(shardscope_pch_${kind} PRIVATE ${shardscope_pch_std} ${ARG_HEADERS})
endfunction()

# shardscope_pch_use(kind target …): the targets reuse their group's PCH.
function(shardscope_pch_use kind)
  if(NOT SHARDSCOPE_PCH OR NOT TARGET shardscope_pch_${kind})
    return()
  endif()
  foreach(t ${ARGN})
    target_precompile_headers(${t} REUSE_FROM shardscope_pch_${kind})
  endforeach()
endfunction()
