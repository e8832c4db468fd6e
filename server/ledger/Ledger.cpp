#include "ledger/Ledger.h"

#include "ledger/PostgresLedger.h"
#include "ledger/SqliteLedger.h"

#include <chrono>
#include <future>

namespace taxicore {

Ledger::Opened Ledger::open(const LedgerOptions &options)
{
    if (isSqliteLedgerUrl(options.url))
        return SqliteLedger::open(options);
    if (PostgresLedger::handles(options.url))
        return PostgresLedger::open(options);
    // Only the scheme: the rest may hold a password.
    return {nullptr, QStringLiteral("unknown ledger backend \"%1\": use the embedded SQLite ledger (empty or "
                                    "\"sqlite:\") or PostgreSQL (postgresql://...)")
                         .arg(options.url.section(u':', 0, 0))};
}

bool Ledger::appendAndWait(LedgerRecord record, QString *error, int timeoutMs)
{
    // Shared: the callback may still run after a timeout has returned.
    auto verdict = std::make_shared<std::promise<QString>>();
    std::future<QString> result = verdict->get_future();
    append(std::move(record), [verdict](bool committed, const QString &why) {
        verdict->set_value(committed ? QString() : (why.isEmpty() ? QStringLiteral("not committed") : why));
    });
    QString message;
    if (result.wait_for(std::chrono::milliseconds(timeoutMs)) != std::future_status::ready)
        message = QStringLiteral("ledger %1: no commit within %2 ms").arg(location()).arg(timeoutMs);
    else
        message = result.get();
    if (error)
        *error = message;
    return message.isEmpty();
}

} // namespace taxicore
