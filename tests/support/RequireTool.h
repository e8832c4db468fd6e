#pragma once

// A test needs a program this machine lacks (wrk, libosmium at build time): the test skips with
// the reason, or fails with it when $TAXICORE_REQUIRE_ALL_TESTS is set (ctest sets it when the
// CMake option of that name is on: CI and `make test`), so a missing tool never passes unseen.

#include <QTest>

#define TC_REQUIRE_TOOL(present, reason)                                                                               \
    do {                                                                                                               \
        if (!(present)) {                                                                                              \
            if (qEnvironmentVariableIsSet("TAXICORE_REQUIRE_ALL_TESTS"))                                               \
                QFAIL(reason " (TAXICORE_REQUIRE_ALL_TESTS: a test may not be left out)");                             \
            QSKIP(reason);                                                                                             \
        }                                                                                                              \
    } while (false)
