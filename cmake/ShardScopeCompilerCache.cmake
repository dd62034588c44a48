# ccache as the compiler launcher when it is installed (scripts/install-deps.sh installs it):
# every rebuild of an unchanged file, in any build folder and any clone of the project, is a
# cache hit. The cache is ccache's own, in the user's cache folder (~/.cache/ccache), so a fresh
# clone (CI's) reuses what an earlier one compiled.
#
# Note: the settings below are what makes hits possible across clones and with precompiled
# headers. base_dir rewrites absolute paths under the source tree to relative ones before
# hashing (a clone in another folder hashes the same); hash_dir off keeps the working folder out
# of the hash of -g builds (ASan's); pch_defines, time_macros and include_file_[cm]time let
# ccache cache the translation units that use a precompiled header made seconds earlier.
option(SHARDSCOPE_CCACHE "Compile through ccache when it is found" ON)
if(SHARDSCOPE_CCACHE)
  find_program(SHARDSCOPE_CCACHE_PROGRAM ccache)
endif()
if(SHARDSCOPE_CCACHE AND SHARDSCOPE_CCACHE_PROGRAM)
  set(shardscope_launcher ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${SHARDSCOPE_CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${shardscope_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${shardscope_launcher})
  message(STATUS "ccache: ${SHARDSCOPE_CCACHE_PROGRAM}")
else()
  message(STATUS "ccache: not used")
endif()
