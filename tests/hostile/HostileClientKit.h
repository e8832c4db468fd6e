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

// The whole answers of HttpClient::readResponses (it ends with an incomplete one when the server
// closed first).
inline QList<HttpResponse> wholeAnswers(const QList<HttpResponse> &read)
{
    QList<HttpResponse> answers;
    for (const HttpResponse &r : read)
        if (r.complete)
            answers.append(r);
    return answers;
}

// "N answers: <each one's describe()>", for failure messages.
inline QString describeAnswers(const QList<HttpResponse> &answers)
{
    QStringList parts;
    for (const HttpResponse &r : answers)
        parts << QString::fromUtf8(r.describe());
    return QStringLiteral("%1 answers: %2").arg(answers.size()).arg(parts.join(QStringLiteral(" | ")));
}

} // namespace taxicore::test::hostile
