# Connection-level hostile clients (issue 14 items 4–7), each against the real taxicore-server:
# accept back-off when out of descriptors, the WebSocket feed within the connection limit and
# its idle timeout, draining refusing new connections, and a wall-clock step in processes mode.
if(NOT TARGET taxicore_testsupport)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/../support ${CMAKE_BINARY_DIR}/tests/support)
endif()

# Preloaded into the server by clock_step: moves the wall clock, leaves CLOCK_MONOTONIC alone.
add_library(taxicore_clock_step_shim SHARED ${CMAKE_CURRENT_SOURCE_DIR}/ClockStepShim.cpp)
target_link_libraries(taxicore_clock_step_shim PRIVATE ${CMAKE_DL_LIBS})

# One line per test file tst_<name>.cpp; ctest names them hostile_<name>.
set(TAXICORE_HOSTILE_CONNECTION_TESTS
  accept_backoff
  drain_refuses
  clock_step
  feed_limits
)
foreach(_test IN LISTS TAXICORE_HOSTILE_CONNECTION_TESTS)
  taxicore_add_test(hostile_${_test} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_${_test}.cpp
                    ${CMAKE_CURRENT_SOURCE_DIR}/ConnectionsKit.h
                    LIBS taxicore_server taxicore_testsupport TIMEOUT 120 LABELS hostile)
  add_dependencies(hostile_${_test} taxicore-server)
endforeach()
add_dependencies(hostile_clock_step taxicore_clock_step_shim)
target_compile_definitions(hostile_clock_step PRIVATE
  TAXICORE_CLOCK_STEP_SHIM="$<TARGET_FILE:taxicore_clock_step_shim>")
target_link_libraries(hostile_feed_limits PRIVATE Qt6::WebSockets)
