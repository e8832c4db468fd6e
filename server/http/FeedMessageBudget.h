#pragma once

#include <QtGlobal>
#include <algorithm>

namespace taxicore {

// How many messages one live-feed client may send (http/LiveFeed): a token bucket of kBurst
// messages, refilled at kPerSecond. Every message costs the feed's thread a JSON parse and, for a
// subscribe, fleet reads, a SHA-256 of the rider token and a reply; without a bound one client
// that reads its replies kept that thread busy for every other client on it. The rider page sends
// a subscribe when its feed opens, when the rider picks a point and when the booking changes:
// a few in a second at most, so a burst of 20 and 10 a second leave it far from the limit,
// while a flood is cut after 20 messages.
class FeedMessageBudget {
public:
    static constexpr int kPerSecond = 10;
    static constexpr int kBurst = 20;

    // True when a message arriving at `nowMs` (a monotonic clock) is within the budget, and takes
    // it; false when the client is over its budget.
    bool take(qint64 nowMs)
    {
        // In thousandths of a message: kPerSecond of them a millisecond refills kPerSecond a second.
        if (m_lastMs >= 0)
            m_milliTokens = std::min(kCapacity, m_milliTokens + std::max<qint64>(0, nowMs - m_lastMs) * kPerSecond);
        m_lastMs = nowMs;
        if (m_milliTokens < kCost)
            return false;
        m_milliTokens -= kCost;
        return true;
    }

private:
    static constexpr qint64 kCost = 1000;
    static constexpr qint64 kCapacity = qint64(kBurst) * kCost;
    qint64 m_milliTokens = kCapacity;
    qint64 m_lastMs = -1;
};

} // namespace taxicore
