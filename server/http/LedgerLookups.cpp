#include "http/LedgerLookups.h"

#include "ledger/LedgerErrors.h"
#include "wire/ApiError.h"
#include "wire/RequestInput.h"

#include <exception>

namespace taxicore {

namespace {

thread_local bool t_inLookup = false;

// Marks the calling thread as inside a lookup for its lifetime.
struct LookupScope {
    LookupScope() { t_inLookup = true; }
    ~LookupScope() { t_inLookup = false; }
    LookupScope(const LookupScope &) = delete;
    LookupScope &operator=(const LookupScope &) = delete;
};

} // namespace

LedgerLookups::LedgerLookups()
{
    // One connection serves a process's reads (the ledger's readers take a lock), so one thread
    // is all that can wait on it; more would only hold more requests in a queue that is full.
    m_thread.setMaxThreadCount(1);
    m_thread.setObjectName(QStringLiteral("taxicore-ledger-lookups"));
}

LedgerLookups::~LedgerLookups()
{
    m_thread.clear();
    m_thread.waitForDone();
}

bool LedgerLookups::inLookup()
{
    return t_inLookup;
}

ApiResponse LedgerLookups::run(const std::function<ApiResponse()> &lookup)
{
    LookupScope scope;
    try {
        return lookup();
    } catch (const ApiException &refused) {
        return refused.response;
    } catch (const std::exception &e) {
        return errorResponse(500, "internal_error", QString::fromLocal8Bit(e.what()));
    }
}

ApiResponse LedgerLookups::defer(const ApiRequest &request, std::function<ApiResponse()> lookup)
{
    if (!request.reply)
        return run(lookup);
    if (m_waiting.fetch_add(1, std::memory_order_relaxed) >= kMaxWaiting) {
        m_waiting.fetch_sub(1, std::memory_order_relaxed);
        ApiResponse busy = errorResponse(
            503, "ledger_busy",
            QStringLiteral("%1 requests are already waiting for the ledger; try again shortly").arg(kMaxWaiting));
        busy.headers.append({QByteArrayLiteral("Retry-After"), QByteArray::number(kRetryAfterS)});
        throw ApiException{busy};
    }
    m_thread.start([this, reply = request.reply, lookup = std::move(lookup)] {
        const ApiResponse response = run(lookup);
        // Free the place before answering: a client that reads this answer and asks again
        // must find it free.
        m_waiting.fetch_sub(1, std::memory_order_relaxed);
        if (response.status != ApiResponse::kDeferred)
            (*reply)(response);
    });
    return deferredResponse();
}

std::optional<QString> LedgerLookups::recentFailure() const
{
    std::lock_guard lock(m_mutex);
    if (m_failure.isEmpty() || Clock::now() - m_failedAt >= std::chrono::milliseconds(kQuietAfterFailureMs))
        return std::nullopt;
    return m_failure;
}

QString LedgerLookups::noteFailure(const QString &error)
{
    QString told = ledgerFailureReason(error, m_where);
    if (told.isEmpty())
        told = QStringLiteral("the ledger cannot be read");
    std::lock_guard lock(m_mutex);
    m_failure = told;
    m_failedAt = Clock::now();
    return told;
}

} // namespace taxicore
