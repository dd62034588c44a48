# `cmake --install` into a fresh prefix gives a working tree: the CLI runs a job from
# PREFIX/bin (it finds the worker beside itself) and PREFIX/share/shardscope holds the presets
# and translations. Run as: cmake -DBUILD_DIR=… -DPREFIX=… -DWITH_GUI=ON|OFF -P install_test.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(expected bin/shardscope-cli bin/shardscope-worker share/shardscope/presets/models.json
    share/shardscope/presets/calculator.json)
if(WITH_GUI)
  list(APPEND expected bin/shardscope share/shardscope/translations/shardscope_zh_CN.qm)
endif()
foreach(f ${expected})
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
execute_process(COMMAND ${PREFIX}/bin/shardscope-cli run --model tiny --ranks 2 --strategy zero3
                        --steps 1 --shared-device
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "param digest")
  message(FATAL_ERROR "the installed CLI did not run a job (${rc}): ${out}${err}")
endif()
file(REMOVE_RECURSE ${PREFIX})
