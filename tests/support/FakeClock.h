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

// Environment entries for a wall clock that can be stepped while the process runs: its offset is
// read from `offsetFile` (e.g. "+0", then "-3600" to step it an hour back), at most once a second.
inline QStringList steppableWallClock(const QString &offsetFile)
{
    return {QStringLiteral("LD_PRELOAD=") + fakeTimeLibrary(), QStringLiteral("FAKETIME_TIMESTAMP_FILE=") + offsetFile,
            QStringLiteral("FAKETIME_CACHE_DURATION=1"), QStringLiteral("FAKETIME_DONT_FAKE_MONOTONIC=1")};
}

} // namespace taxicore::test
