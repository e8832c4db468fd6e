#include "ledger/PostgresNodeSlot.h"

#include "ledger/PostgresSchema.h"

#include <QDebug>
#include <libpq-fe.h>

namespace taxicore {

PostgresNodeSlot::PostgresNodeSlot(PostgresConnection::Settings settings)
    : m_connection(std::move(settings))
{
}

QString PostgresNodeSlot::tryLock(int slot, bool *locked)
{
    QString error;
    PgResult result = m_connection.exec("SELECT pg_try_advisory_lock($1::integer, $2::integer)",
                                        PgParams().add(kPostgresLockClass).add(slot), &error);
    *locked = result && PQgetvalue(result.get(), 0, 0)[0] == 't';
    return error;
}

QString PostgresNodeSlot::take()
{
    if (QString error = m_connection.connect(); !error.isEmpty())
        return error;
    for (int slot = 1; slot <= kPostgresNodeSlots; ++slot) {
        bool locked = false;
        if (QString error = tryLock(slot, &locked); !error.isEmpty())
            return error;
        if (locked) {
            m_slot.store(slot, std::memory_order_release);
            return {};
        }
    }
    return QStringLiteral("ledger PostgreSQL %1: all %2 node slots are held by running nodes")
        .arg(m_connection.where())
        .arg(kPostgresNodeSlots);
}

void PostgresNodeSlot::reassert()
{
    const int slot = this->slot();
    if (slot == 0)
        return;
    // Taken again on whatever session is current: exec() replaces a connection the server ended
    // (a restart), so "the session still answers" no longer means "it still holds the lock". On
    // the session that holds it the lock is re-entrant, and this only stacks it once more (all
    // released with the session).
    bool locked = false;
    QString error = tryLock(slot, &locked);
    if (locked)
        return;
    m_connection.close(); // try again at the next reconnect
    qCritical().noquote() << QStringLiteral(
                                 "LEDGER NODE SLOT LOST: cannot take node slot %1 again after reconnecting to "
                                 "PostgreSQL at %2 (%3); booking ids of this node may collide with another node's "
                                 "until it restarts")
                                 .arg(slot)
                                 .arg(m_connection.where(),
                                      error.isEmpty() ? QStringLiteral("another node holds it") : error);
}

} // namespace taxicore
