#pragma once

#include <QAtomicInt>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QTemporaryDir>
#include <QVariant>

namespace taxicore::test {

// Runs `sql` (one value) on the ledger in the data directory `dir`, as another process would
// read it; an invalid QVariant when the file or the query fails. A connection of its own per
// call, closed before it returns, so it never holds the file open across a server restart.
inline QVariant ledgerValue(const QTemporaryDir &dir, const QString &sql)
{
    static QAtomicInt calls;
    const QString name = QStringLiteral("ledger-value-%1").arg(calls.fetchAndAddRelaxed(1));
    QVariant value;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(sql) && q.next())
                value = q.value(0);
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return value;
}

} // namespace taxicore::test
