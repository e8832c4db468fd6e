# How tests are named (one scheme for every kind of test):
#   tests/<area>/<area>_<what>_test.cpp   a Qt Test executable
#   tests/<area>/<area>_<what>_test.sh    a script (shell; it may drive Node.js or Python)
# The ctest name and the executable are the file's stem (`ctest -R server_booking_flow_test`
# runs tests/server/server_booking_flow_test.cpp), so the two cannot drift apart. A test run
# once per mode adds the mode after a dot: hostile_framing_test.single. Helpers keep CamelCase
# names (tests/support/Wait.h, tests/bench/TestHttpServer.cpp) and are never a test.

# libfaketime, preloaded by the clock-step tests (tests/support/FakeClock.h, ledger_clock_step_test).
set(TAXICORE_FAKETIME_LIBRARY /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
    CACHE FILEPATH "libfaketime (package faketime), for the clock-step tests")

# taxicore_add_test(FILE.cpp [SOURCES more...] [LIBS ...] [DEPENDS targets...] [TIMEOUT s]
#                   [LABELS ...] [ENVIRONMENT VAR=value...] [WINDOWED WRAPPER command...]
#                   [VARIANTS v... VARIANT_ENV VAR])
# One Qt Test executable named after FILE.cpp's stem, registered with ctest under that name.
# Runs on the offscreen platform unless WINDOWED (then WRAPPER gives it a display: xvfb-run).
# DEPENDS: programs the test starts (built with it). VARIANTS: one ctest test per value,
# <stem>.<value>, with VARIANT_ENV set to it.
function(taxicore_add_test source)
  cmake_parse_arguments(T "WINDOWED" "TIMEOUT;VARIANT_ENV" "SOURCES;LIBS;DEPENDS;LABELS;ENVIRONMENT;WRAPPER;VARIANTS" ${ARGN})
  get_filename_component(name ${source} NAME_WE)
  if(NOT name MATCHES "_test$")
    message(FATAL_ERROR "${source}: a test file is named <area>_<what>_test.cpp (tests/TaxiCoreTest.cmake)")
  endif()
  qt_add_executable(${name} ${source} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(environment "TAXICORE_BIN_DIR=${CMAKE_BINARY_DIR}/bin" ${T_ENVIRONMENT})
  if(NOT T_WINDOWED)
    list(APPEND environment "QT_QPA_PLATFORM=offscreen")
  endif()
  if(T_VARIANTS)
    foreach(variant IN LISTS T_VARIANTS)
      _taxicore_register_test(${name}.${variant} "${T_TIMEOUT}" "${T_LABELS}"
        "${environment};${T_VARIANT_ENV}=${variant}" ${T_WRAPPER} $<TARGET_FILE:${name}>)
    endforeach()
  else()
    _taxicore_register_test(${name} "${T_TIMEOUT}" "${T_LABELS}" "${environment}"
      ${T_WRAPPER} $<TARGET_FILE:${name}>)
  endif()
endfunction()

# taxicore_add_script_test(FILE [ARGS ...] [TIMEOUT s] [LABELS ...] [ENVIRONMENT VAR=value...])
# A script test (shell, or a shell script driving Node.js/Python), named after FILE's stem.
function(taxicore_add_script_test script)
  cmake_parse_arguments(T "" "TIMEOUT" "ARGS;LABELS;ENVIRONMENT" ${ARGN})
  get_filename_component(name ${script} NAME_WE)
  if(NOT name MATCHES "_test$")
    message(FATAL_ERROR "${script}: a test script is named <area>_<what>_test.sh (tests/TaxiCoreTest.cmake)")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  _taxicore_register_test(${name} "${T_TIMEOUT}" "${T_LABELS}" "${T_ENVIRONMENT}"
    ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${T_ARGS})
  # make test-asan preloads Mesa's DRI driver for the console tests (scripts/sanitizers/test-asan.sh);
  # in a script it would load into every grep, sed and cp it runs (~70 ms each: layering_test went
  # from 7 s to 73 s, past its timeout). No script test renders with Mesa.
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT_MODIFICATION "LD_PRELOAD=unset:")
endfunction()

function(_taxicore_register_test name timeout labels environment)
  add_test(NAME ${name} COMMAND ${ARGN})
  if(TAXICORE_REQUIRE_ALL_TESTS)
    list(APPEND environment "TAXICORE_REQUIRE_ALL_TESTS=1") # a missing tool fails, not skips
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS "${labels}"
    ENVIRONMENT "${environment}")
  taxicore_isolate_test(${name})
endfunction()

# taxicore_find_test_tool(VAR NAMES program... PACKAGE debian-package FOR what [PATHS dir... NO_DEFAULT_PATH])
# Finds a program tests need (into the cache variable VAR). When it is missing, the tests that
# need it cannot be registered: with TAXICORE_REQUIRE_ALL_TESTS (CI, `make test`) that is a
# configure error naming the package to install; otherwise a warning, so it is never silent.
function(taxicore_find_test_tool var)
  cmake_parse_arguments(T "NO_DEFAULT_PATH" "PACKAGE;FOR" "NAMES;PATHS" ${ARGN})
  set(extra)
  if(T_NO_DEFAULT_PATH)
    set(extra NO_DEFAULT_PATH)
  endif()
  find_program(${var} NAMES ${T_NAMES} PATHS ${T_PATHS} ${extra})
  if(NOT ${var})
    taxicore_test_missing("${T_FOR}: ${T_NAMES} not found (apt-get install ${T_PACKAGE}, or scripts/install-deps.sh)")
  endif()
endfunction()

# taxicore_test_missing(MESSAGE): a test cannot run as it should on this machine.
function(taxicore_test_missing text)
  if(TAXICORE_REQUIRE_ALL_TESTS)
    message(FATAL_ERROR "${text}\nTAXICORE_REQUIRE_ALL_TESTS is on (CI, make test): no test may be left out.")
  else()
    message(WARNING "${text}")
  endif()
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
