#pragma once

#include "region/Clock.h"

namespace taxicore {

// How long one pass over a connection's pipelined requests (ConnectionGuard::inspect) may go on
// starting them. The rest wait for the next pass, after the event loop turned: other connections,
// timers, a worker's heartbeat. Without it a pipeline of CPU-heavy requests (/fib) ran in one turn
// of the loop: every other client waited it out, and a worker went silent long enough to be
// killed as hung.
class PassBudget {
public:
    static constexpr long long kBudgetMs = 10;

    explicit PassBudget(long long startedMs)
        : m_endsMs(startedMs + kBudgetMs)
    {
    }

    // Whether one more request may start in this pass. The first always does (a pass that served
    // nothing would only be queued again); the clock is read only from the second on, so a
    // connection that does not pipeline pays nothing for the budget.
    bool allowsAnother()
    {
        if (!m_exhausted && m_started++ > 0 && clock::monotonicMs() >= m_endsMs)
            m_exhausted = true;
        return !m_exhausted;
    }
    bool exhausted() const { return m_exhausted; }

private:
    long long m_endsMs;
    int m_started = 0;
    bool m_exhausted = false;
};

} // namespace taxicore
