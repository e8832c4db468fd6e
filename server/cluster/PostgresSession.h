#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

struct pg_conn;

namespace taxicore {

// One blocking libpq connection with bounded waits, for the cluster's small bookkeeping queries
// (booking id blocks, the leader lock). Not for the ledger's batches: ledger/ has its own writer.
// Not thread-safe: one owner thread at a time.
class PostgresSession {
public:
    // `url` is a libpq URI (postgresql://user@host:port/db); every wait ends after `timeoutMs`.
    explicit PostgresSession(QString url, int timeoutMs = 2000);
    ~PostgresSession();
    PostgresSession(const PostgresSession &) = delete;
    PostgresSession &operator=(const PostgresSession &) = delete;

    // Connects when not connected; false with lastError() set when the server cannot be reached.
    bool ensureConnected();
    // The first column of the first row of `sql`; none on error (the connection is dropped, the
    // next call reconnects).
    std::optional<QByteArray> queryValue(const char *sql);
    // Runs `sql` (no result wanted); false on error.
    bool execute(const char *sql);
    void disconnect();
    bool isConnected() const { return m_conn != nullptr; }
    QString lastError() const { return m_lastError; }
    // Where it connects, without a password: for messages.
    QString location() const;

private:
    bool fail(const QString &what);

    QString m_url;
    int m_timeoutMs;
    pg_conn *m_conn = nullptr;
    QString m_lastError;
};

} // namespace taxicore
