# ctest Install.DriverDocsAndExamples: `cmake --install` into a fresh prefix puts the
# driver, the README, every doc page and the examples in place, and the installed
# driver runs.
#   cmake -DINFRACC_SOURCE_DIR=... -DINFRACC_BINARY_DIR=... -P CheckInstall.cmake
set(prefix "${INFRACC_BINARY_DIR}/install-check")
file(REMOVE_RECURSE "${prefix}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${INFRACC_BINARY_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
file(GLOB docs RELATIVE "${INFRACC_SOURCE_DIR}/docs" "${INFRACC_SOURCE_DIR}/docs/*.md")
file(GLOB examples RELATIVE "${INFRACC_SOURCE_DIR}/examples" "${INFRACC_SOURCE_DIR}/examples/*")
set(expected bin/infracc share/doc/infracc/README.md)
foreach(d ${docs})
  list(APPEND expected share/doc/infracc/${d})
endforeach()
foreach(e ${examples})
  list(APPEND expected share/doc/infracc/examples/${e})
endforeach()
foreach(f ${expected})
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
execute_process(COMMAND "${prefix}/bin/infracc" "${prefix}/share/doc/infracc/examples/single-switch.yaml"
                        -emit=digest
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^[0-9a-f]+")
  message(FATAL_ERROR "the installed infracc did not run: ${rc} ${out}")
endif()
file(REMOVE_RECURSE "${prefix}")
