#pragma once

#include "wire/HttpTypes.h"
#include "wire/RequestInput.h"

#include <QString>
#include <QThreadPool>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

namespace taxicore {

// Where a request that must read the ledger (a booking this node's fleet no longer or not yet
// holds) waits for it: one thread beside the event loop. On PostgreSQL a read can wait seconds
// (a hung database waits out the statement timeout), and the loop must serve everyone else
// meanwhile. Bounded: past kMaxWaiting such requests are refused at once (503 ledger_busy), and
// for kQuietAfterFailureMs after a failed read the ledger is not asked again, so a queue behind
// a dead database drains in one timeout rather than one timeout each.
class LedgerLookups {
public:
    static constexpr int kMaxWaiting = 32;            // queued or running, per process
    static constexpr int kQuietAfterFailureMs = 1000; // answered with the last failure meanwhile
    static constexpr int kRetryAfterS = 1;

    LedgerLookups();
    // Waits for the lookup running now (it may use what its handler's owner holds); queued ones
    // are dropped: their service is going away too.
    ~LedgerLookups();
    LedgerLookups(const LedgerLookups &) = delete;
    LedgerLookups &operator=(const LedgerLookups &) = delete;

    // Runs `lookup` on the lookup thread and answers `request` with what it returns (or the
    // ApiException it throws); the deferred response to return now. Throws 503 ledger_busy when
    // kMaxWaiting are waiting. A request that cannot be answered later (no reply) runs it here.
    ApiResponse defer(const ApiRequest &request, std::function<ApiResponse()> lookup);
    // True inside a lookup: the handler reads the ledger itself instead of deferring again.
    static bool inLookup();

    // The value of `read()` (a ledger read answering a LedgerResult), on the lookup thread; 503
    // ledger_unavailable with the reason when it fails (noted, so that for kQuietAfterFailureMs the
    // next readers are told at once instead of each waiting out another timeout), or failed lately.
    template <typename Read> auto readLedger(const Read &read)
    {
        if (const auto failed = recentFailure())
            throwApiError(503, "ledger_unavailable", *failed);
        auto result = read();
        if (!result.ok()) {
            throwApiError(503, "ledger_unavailable", noteFailure(result.error));
        }
        return std::move(result.value);
    }

    // Where the ledger is (Ledger::location()): taken out of what riders are told.
    void setLocation(const QString &where) { m_where = where; }
    // The reason the last read failed, as riders are told it (ledgerFailureReason: no file path, no
    // database address), when that was less than kQuietAfterFailureMs ago.
    std::optional<QString> recentFailure() const;
    // Notes a failed read; returns its reason as riders are told it.
    QString noteFailure(const QString &error);

private:
    using Clock = std::chrono::steady_clock;
    static ApiResponse run(const std::function<ApiResponse()> &lookup);

    QString m_where; // set once, before the first lookup
    QThreadPool m_thread;
    std::atomic<int> m_waiting{0};
    mutable std::mutex m_mutex; // guards the two below
    Clock::time_point m_failedAt;
    QString m_failure;
};

} // namespace taxicore
