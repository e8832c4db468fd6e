# taxicore_add_test(NAME SOURCES ... LIBS ... [TIMEOUT s] [LABELS ...])
# One Qt Test executable, registered with ctest under its own name.
function(taxicore_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  qt_add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "TAXICORE_BIN_DIR=${CMAKE_BINARY_DIR}/bin;QT_QPA_PLATFORM=offscreen"
    LABELS "${T_LABELS}")
  taxicore_isolate_test(${name})
endfunction()

# taxicore_isolate_test(NAME)
# Gives a test its own home for everything a program keeps per user (the server's default data
# directory with its ledger and tokens, the console's settings), under <build>/test-home/NAME,
# emptied before each run by the test_home_reset fixture. Without it, a test that starts a
# program without --data-dir reads whatever the machine's user left there (a ledger written by
# another version, a data directory another test holds) and tests that run in parallel share it.
function(taxicore_isolate_test name)
  set(home ${CMAKE_BINARY_DIR}/test-home/${name})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
    "XDG_DATA_HOME=${home}/data" "XDG_CONFIG_HOME=${home}/config"
    "XDG_CACHE_HOME=${home}/cache" "XDG_STATE_HOME=${home}/state")
  set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED taxicore_test_home)
endfunction()
