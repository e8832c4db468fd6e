#pragma once

#include "ledger/Ledger.h"

#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QTest>

// Shared by the ledger tests: records, and a second, independent connection to check the file.
namespace ledgertest {

using namespace taxicore;

inline LedgerOptions optionsFor(const QString &dir)
{
    LedgerOptions options;
    options.dataDir = dir;
    options.busyTimeoutMs = 2000;
    options.lockedGiveUpMs = 20000;
    return options;
}

inline BookingRecord booking(quint64 id, const QString &state = QStringLiteral("assigned"),
                             qint64 atMs = 1'700'000'000'000)
{
    BookingRecord b;
    b.bookingId = id;
    b.state = state;
    b.carId = int(id % 500) + 1;
    b.riderId = QStringLiteral("rider-%1").arg(id);
    b.pickup = {57.70 + double(id % 100) * 1e-4, 11.97};
    b.createdMs = atMs;
    b.atMs = atMs;
    return b;
}

inline TripRecord trip(quint64 id, qint64 endedMs, double total)
{
    TripRecord t;
    t.bookingId = id;
    t.carId = int(id % 500) + 1;
    t.riderId = QStringLiteral("rider-%1").arg(id);
    t.startedMs = endedMs - 600'000;
    t.endedMs = endedMs;
    t.distanceM = 3000;
    t.durationS = 600;
    t.fare = {45, 40.5, 55, 95, 1.0, total, QStringLiteral("SEK")};
    return t;
}

// A plain QSQLITE connection of its own (not the ledger's), as another process would see the file.
class RawConnection {
public:
    explicit RawConnection(const QString &file)
        : m_name(QStringLiteral("raw-%1").arg(++counter()))
    {
        m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        m_db.setDatabaseName(file);
        m_db.open();
    }
    ~RawConnection()
    {
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_name);
    }
    qint64 scalar(const QString &sql)
    {
        QSqlQuery query(m_db);
        if (!query.exec(sql) || !query.next())
            return -1;
        return query.value(0).toLongLong();
    }
    bool exec(const QString &sql)
    {
        QSqlQuery query(m_db);
        return query.exec(sql);
    }
    QSqlDatabase &db() { return m_db; }

private:
    static int &counter()
    {
        static int n = 0;
        return n;
    }
    QString m_name;
    QSqlDatabase m_db;
};

// Starts ledger-test-writer: bookings [first, first+count) into dir; see LedgerTestWriter.cpp.
inline void startWriter(QProcess &process, const QString &dir, quint64 first, int count, const QStringList &extra = {})
{
    process.setProgram(QStringLiteral(LEDGER_TEST_WRITER));
    process.setArguments(QStringList{dir, QString::number(first), QString::number(count)} + extra);
    process.setProcessChannelMode(QProcess::SeparateChannels);
    process.start();
}

} // namespace ledgertest
