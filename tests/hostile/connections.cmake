# Connection-level hostile clients (issue 14 items 4–7), each against the real taxicore-server:
# accept back-off when out of descriptors, the WebSocket feed within the connection limit and
# its idle timeout, draining refusing new connections, a wall-clock step in processes mode, one
# client address holding every connection (--max-connections-per-client), and refusals a client
# that already sent its request still reads.
if(NOT TARGET taxicore_testsupport)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/../support ${CMAKE_BINARY_DIR}/tests/support)
endif()

foreach(source IN ITEMS
    hostile_accept_backoff_test.cpp
    hostile_drain_refuses_test.cpp
    hostile_clock_step_test.cpp
    hostile_feed_limits_test.cpp
    hostile_feed_ping_flood_test.cpp
    hostile_feed_flood_test.cpp
    hostile_feed_oversize_test.cpp
    hostile_connections_per_client_test.cpp
    hostile_refusal_delivery_test.cpp
    hostile_open_bookings_test.cpp
    hostile_pipelined_cpu_test.cpp)
  taxicore_add_test(${CMAKE_CURRENT_SOURCE_DIR}/${source}
                    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/ConnectionsKit.h ${CMAKE_CURRENT_SOURCE_DIR}/AddressedClient.h
                    LIBS taxicore_server taxicore_testsupport DEPENDS taxicore-server
                    TIMEOUT 120 LABELS hostile)
endforeach()
target_link_libraries(hostile_feed_limits_test PRIVATE Qt6::WebSockets)
# The feed's message budget and size bounds, with QWebSocket clients (FeedClientKit.h).
foreach(target IN ITEMS hostile_feed_flood_test hostile_feed_oversize_test)
  target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/FeedClientKit.h ${CMAKE_CURRENT_SOURCE_DIR}/QtWebSocketLeakUnwind.h)
  target_link_libraries(${target} PRIVATE Qt6::WebSockets)
endforeach()
# Under make test-asan the test's own client leaks inside Qt WebSockets 6.4's ~QWebSocket; the test
# binary asks for the slow unwinder itself (QtWebSocketLeakUnwind.h, in each of the three feed tests),
# so the taxicore-server it starts does not inherit it.
