#pragma once

#include <QByteArray>
#include <QString>

#include <chrono>
#include <optional>

struct pg_conn;
struct pg_result;

namespace taxicore {

// One libpq connection with bounded waits, for the cluster's small bookkeeping queries (booking
// id blocks, the leader lock). Not for the ledger's batches: ledger/ has its own writer.
// Not thread-safe: one owner thread at a time.
//
// Every wait ends by a deadline on this side, whatever the network does: the connection and each
// query are driven without blocking (poll() on libpq's socket). A silent peer (a partition: no
// FIN, no RST) would otherwise hold a blocking PQexec until the kernel gives up retransmitting,
// about 15 minutes. The kernel is told too: TCP keepalives and tcp_user_timeout close a dead
// connection that this side is not waiting on.
class PostgresSession {
public:
    using Clock = std::chrono::steady_clock;

    // `url` is a libpq URI (postgresql://user@host:port/db); every wait ends after `timeoutMs`
    // (also the server's statement_timeout and the connection's tcp_user_timeout).
    explicit PostgresSession(QString url, int timeoutMs = 2000);
    ~PostgresSession();
    PostgresSession(const PostgresSession &) = delete;
    PostgresSession &operator=(const PostgresSession &) = delete;

    // Connects when not connected; false with lastError() set when the server cannot be reached.
    bool ensureConnected();
    // The first column of the first row of `sql`; none on error or when no answer came within the
    // timeout (the connection is dropped, the next call reconnects).
    std::optional<QByteArray> queryValue(const char *sql);
    // The same, with an earlier end: nothing is waited for past `deadline` (connecting included).
    std::optional<QByteArray> queryValue(const char *sql, Clock::time_point deadline);
    // Runs `sql` (no result wanted); false on error.
    bool execute(const char *sql);
    bool execute(const char *sql, Clock::time_point deadline);
    void disconnect();
    bool isConnected() const { return m_conn != nullptr; }
    QString lastError() const { return m_lastError; }
    // Where it connects, without a password: for messages.
    QString location() const;
    int timeoutMs() const { return m_timeoutMs; }

private:
    bool fail(const QString &what);
    bool connectBy(Clock::time_point deadline);
    // Sends `sql` and waits for all its results until `deadline`; the last one, or null.
    pg_result *run(const char *sql, Clock::time_point deadline);
    // Waits until libpq's socket is readable (or writable); false at the deadline.
    bool waitForSocket(bool write, Clock::time_point deadline);

    QString m_url;
    int m_timeoutMs;
    pg_conn *m_conn = nullptr;
    QString m_lastError;
};

} // namespace taxicore
