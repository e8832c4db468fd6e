# Framing and memory of hostile clients (issue 14 items 1–3): the framing table
# (framing_cases.txt) and the memory bounds, each executable run by ctest once per mode as
# hostile_<name>_single, _pool and _processes ($TAXICORE_HOSTILE_MODE).
if(NOT TARGET taxicore_testsupport)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/../support ${CMAKE_BINARY_DIR}/tests/support)
endif()

# One line per test file tst_<name>.cpp.
set(TAXICORE_HOSTILE_FRAMING_TESTS
  framing
  memory
)
foreach(_test IN LISTS TAXICORE_HOSTILE_FRAMING_TESTS)
  set(_target hostile_${_test})
  qt_add_executable(${_target} ${CMAKE_CURRENT_SOURCE_DIR}/tst_${_test}.cpp
                    ${CMAKE_CURRENT_SOURCE_DIR}/HostileClientKit.h)
  target_link_libraries(${_target} PRIVATE Qt6::Test taxicore_testsupport)
  set_target_properties(${_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_dependencies(${_target} taxicore-server)
  foreach(_mode single pool processes)
    add_test(NAME ${_target}_${_mode} COMMAND ${_target})
    set_tests_properties(${_target}_${_mode} PROPERTIES TIMEOUT 120 LABELS hostile
      ENVIRONMENT "TAXICORE_BIN_DIR=${CMAKE_BINARY_DIR}/bin;QT_QPA_PLATFORM=offscreen;TAXICORE_HOSTILE_MODE=${_mode}")
    taxicore_isolate_test(${_target}_${_mode})
  endforeach()
endforeach()
target_compile_definitions(hostile_framing PRIVATE
  TAXICORE_FRAMING_CASES="${CMAKE_CURRENT_SOURCE_DIR}/framing_cases.txt")
