#pragma once

// The one way a test waits for something: poll a condition, with events processed in between,
// until it holds or the timeout passes. A fixed sleep is either too short on a loaded machine
// or longer than needed everywhere else; polling is exact. Include after <QTest>.

#include <QDeadlineTimer>
#include <QTest>
#include <algorithm>
#include <functional>

namespace taxicore::test {

// Cheap enough for an HTTP call per poll on loopback, short against every timeout the tests use.
constexpr int kWaitPollMs = 50;

// Polls `done` every `pollMs` until it returns true (true) or `timeoutMs` passed (false); `done`
// is called once more at the deadline, so a condition met during the last pause still counts.
inline bool waitUntil(const std::function<bool()> &done, int timeoutMs, int pollMs = kWaitPollMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        if (done())
            return true;
        if (deadline.hasExpired())
            return false;
        QTest::qWait(int(std::clamp<qint64>(deadline.remainingTime(), 1, pollMs)));
    }
}

} // namespace taxicore::test
