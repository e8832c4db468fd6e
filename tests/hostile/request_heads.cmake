# What a request head must carry, each executable run by ctest once per mode as
# hostile_<name>_test.single, .pool and .processes ($TAXICORE_HOSTILE_MODE): exactly one Host in
# HTTP/1.1 (RFC 9112 §3.2), and a valid WebSocket handshake when it asks for an upgrade (RFC 6455 §4).
if(NOT TARGET taxicore_testsupport)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/../support ${CMAKE_BINARY_DIR}/tests/support)
endif()

foreach(source IN ITEMS hostile_host_header_test.cpp hostile_websocket_handshake_test.cpp)
  taxicore_add_test(${CMAKE_CURRENT_SOURCE_DIR}/${source} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/HostileClientKit.h
                    LIBS taxicore_testsupport DEPENDS taxicore-server TIMEOUT 120 LABELS hostile
                    VARIANTS single pool processes VARIANT_ENV TAXICORE_HOSTILE_MODE)
endforeach()
