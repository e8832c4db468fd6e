#pragma once
// A server process whose wall clock is off by a fixed offset, as on a host whose clock is set
// wrong or was stepped: libfaketime (Debian package `faketime`) preloaded into the process. Only
// the wall clock moves; CLOCK_MONOTONIC stays the host's, as a clock step leaves it.

#include <QFileInfo>
#include <QString>
#include <QStringList>
#include <cstdlib>

namespace taxicore::test {

inline QString fakeTimeLibrary()
{
    return QStringLiteral("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
}

inline bool fakeTimeAvailable()
{
    return QFileInfo::exists(fakeTimeLibrary());
}

// Environment entries for ServerProcess::setEnvironment: the wall clock `offsetS` seconds away
// from the host's (negative: behind).
inline QStringList wallClockOffsetBy(int offsetS)
{
    return {QStringLiteral("LD_PRELOAD=") + fakeTimeLibrary(),
            QStringLiteral("FAKETIME=%1%2")
                .arg(offsetS < 0 ? QStringLiteral("-") : QStringLiteral("+"))
                .arg(std::abs(offsetS)),
            QStringLiteral("FAKETIME_DONT_FAKE_MONOTONIC=1")};
}

} // namespace taxicore::test
