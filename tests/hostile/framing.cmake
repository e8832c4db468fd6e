# Framing and memory of hostile clients (issue 14 items 1–3): the framing table
# (framing_cases.txt) and the memory bounds, each executable run by ctest once per mode as
# hostile_<name>_test.single, .pool and .processes ($TAXICORE_HOSTILE_MODE).
if(NOT TARGET taxicore_testsupport)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/../support ${CMAKE_BINARY_DIR}/tests/support)
endif()

foreach(source IN ITEMS hostile_framing_test.cpp hostile_memory_test.cpp)
  taxicore_add_test(${CMAKE_CURRENT_SOURCE_DIR}/${source} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/HostileClientKit.h
                    LIBS taxicore_testsupport DEPENDS taxicore-server TIMEOUT 120 LABELS hostile
                    VARIANTS single pool processes VARIANT_ENV TAXICORE_HOSTILE_MODE)
endforeach()
target_compile_definitions(hostile_framing_test PRIVATE
  TAXICORE_FRAMING_CASES="${CMAKE_CURRENT_SOURCE_DIR}/framing_cases.txt")
