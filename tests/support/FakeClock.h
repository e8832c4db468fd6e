#pragma once
// A process whose wall clock is off by an offset, as on a host whose clock is set wrong or was
// stepped: libfaketime (Debian package `faketime`; its path is TAXICORE_FAKETIME_LIBRARY, set in
// tests/TaxiCoreTest.cmake) preloaded into it. Only the wall clock moves; CLOCK_MONOTONIC stays
// the host's, as a clock step leaves it.

#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QStringList>
#include <cstdlib>

namespace taxicore::test {

inline QString fakeTimeLibrary()
{
    return QStringLiteral(TAXICORE_FAKETIME_LIBRARY);
}

inline bool fakeTimeAvailable()
{
    return QFileInfo::exists(fakeTimeLibrary());
}

// libfaketime's form of an offset: "+3600", "-60".
inline QString offsetText(qint64 offsetS)
{
    return (offsetS < 0 ? QStringLiteral("-") : QStringLiteral("+")) + QString::number(std::llabs(offsetS));
}

// Environment entries for ServerProcess::setEnvironment: the wall clock `offsetS` seconds away
// from the host's (negative: behind).
inline QStringList wallClockOffsetBy(qint64 offsetS)
{
    return {QStringLiteral("LD_PRELOAD=") + fakeTimeLibrary(), QStringLiteral("FAKETIME=") + offsetText(offsetS),
            QStringLiteral("FAKETIME_DONT_FAKE_MONOTONIC=1")};
}

// Environment entries for a wall clock that can be stepped while the process runs: its offset is
// read from `offsetFile` (setWallClockOffset), at most once a second.
inline QStringList steppableWallClock(const QString &offsetFile)
{
    return {QStringLiteral("LD_PRELOAD=") + fakeTimeLibrary(), QStringLiteral("FAKETIME_TIMESTAMP_FILE=") + offsetFile,
            QStringLiteral("FAKETIME_CACHE_DURATION=1"), QStringLiteral("FAKETIME_DONT_FAKE_MONOTONIC=1")};
}

// Steps a steppable clock: the processes reading `offsetFile` see the wall clock `offsetS`
// seconds from the host's within a second. False when the file cannot be written.
inline bool setWallClockOffset(const QString &offsetFile, qint64 offsetS)
{
    QFile file(offsetFile);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
           && file.write(offsetText(offsetS).toLatin1() + '\n') > 0;
}

} // namespace taxicore::test
