#include "ledger/PostgresLedger.h"

namespace taxicore {

namespace {

PostgresConnection::Settings settingsOf(const LedgerOptions &options)
{
    return {options.url, options.connectTimeoutMs, options.statementTimeoutMs};
}

} // namespace

bool PostgresLedger::handles(const QString &url)
{
    return url.startsWith(QLatin1String("postgresql://")) || url.startsWith(QLatin1String("postgres://"));
}

PostgresLedger::PostgresLedger(const LedgerOptions &options)
    : Ledger(options)
    , m_location(describePostgresUrl(options.url).masked)
    , m_slot(options.claimNodeSlot ? std::make_unique<PostgresNodeSlot>(settingsOf(options)) : nullptr)
    , m_queries(settingsOf(options), m_slot.get())
    , m_writer(options, m_slot.get())
{
}

PostgresLedger::~PostgresLedger() = default;

Ledger::Opened PostgresLedger::open(const LedgerOptions &options)
{
    const PgTarget target = describePostgresUrl(options.url);
    if (!target.error.isEmpty())
        return {nullptr, target.error};
    std::unique_ptr<PostgresLedger> ledger(new PostgresLedger(options));
    // The schema first (the writer migrates), then the slot: its lock needs no table, but a node
    // that cannot write should not hold one.
    if (QString error = ledger->m_writer.start(); !error.isEmpty())
        return {nullptr, error};
    if (ledger->m_slot) {
        if (QString error = ledger->m_slot->take(); !error.isEmpty())
            return {nullptr, error};
    }
    return {std::move(ledger), {}};
}

void PostgresLedger::append(LedgerRecord record, Done done)
{
    m_writer.append(std::move(record), std::move(done));
}

} // namespace taxicore
