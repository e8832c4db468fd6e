#pragma once

// Shared by the framing and memory tests of tests/hostile: the mode a ctest runs in and the
// server's arguments for it. From tests/support: raw sockets (RawSocket.h), the server serving
// in its mode (ServingKit.h), its processes' memory (ProcessInfo.h). Include after <QTest>.

#include "ProcessInfo.h" // treeRssKiB
#include "RawSocket.h"   // connectRaw, sendSome
#include "ServingKit.h"  // startServing: processes mode waits for its workers

#include <poll.h>

namespace taxicore::test::hostile {

// ctest runs each hostile executable once per mode: $TAXICORE_HOSTILE_MODE.
inline QString modeUnderTest()
{
    const QString mode = qEnvironmentVariable("TAXICORE_HOSTILE_MODE", QStringLiteral("single"));
    return mode;
}

inline QStringList serverArgs(const QString &mode)
{
    return {QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--cars"),
            QStringLiteral("50")};
}

} // namespace taxicore::test::hostile
