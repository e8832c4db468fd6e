#include "ledger/CommitHealth.h"

#include <QDebug>

namespace taxicore {

CommitHealth::CommitHealth(QString location)
    : m_location(std::move(location))
{
}

void CommitHealth::committed(quint64 failedTotal)
{
    if (!m_failing.exchange(false, std::memory_order_relaxed))
        return;
    qWarning().noquote() << QStringLiteral("ledger %1: commits succeed again (%2 records were refused meanwhile)")
                                .arg(m_location)
                                .arg(failedTotal - m_failedBefore);
}

void CommitHealth::failed(const QString &error, quint64 failedTotal)
{
    if (m_failing.exchange(true, std::memory_order_relaxed))
        return;
    m_failedBefore = failedTotal;
    // One line, though libpq's messages span several ("...failed: Connection refused\n\tIs the...").
    qWarning().noquote() << error.simplified()
                                + QStringLiteral("; records are refused (503 to their requests) until a commit "
                                                 "succeeds");
}

} // namespace taxicore
