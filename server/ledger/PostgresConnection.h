#pragma once

#include <QByteArray>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

struct pg_conn;
struct pg_result;

namespace taxicore {

// One statement's parameters in libpq's text format; a missing optional is SQL NULL.
class PgParams {
public:
    PgParams &add(qint64 value);
    PgParams &add(int value);
    PgParams &add(double value);
    PgParams &add(const QString &text);
    PgParams &addUtf8(QByteArray text);
    PgParams &add(std::optional<double> value);
    PgParams &addBytes(const QByteArray &bytes); // bytea; empty is NULL
    PgParams &addNull();

    int count() const { return int(m_values.size()); }
    std::vector<const char *> pointers() const;

private:
    std::vector<std::optional<QByteArray>> m_values;
};

// A PGresult, freed when it goes out of scope.
struct PgResultDeleter {
    void operator()(pg_result *result) const;
};
using PgResult = std::unique_ptr<pg_result, PgResultDeleter>;

// Where a libpq URI points, for messages: host:port/db and the URI without its password.
struct PgTarget {
    QString where;  // "127.0.0.1:5432/taxicore"
    QString masked; // "postgresql://taxi@127.0.0.1:5432/taxicore" (never the password)
    QString error;  // the URI does not parse
};
PgTarget describePostgresUrl(const QString &url);

// One libpq connection driven without blocking: every wait (connect, send, result) is a poll()
// bounded by a deadline, so a PostgreSQL that is gone or hangs costs at most that timeout, never a
// hang. Owned by one thread at a time. After a connection failure it is closed; connect() again.
class PostgresConnection {
public:
    struct Settings {
        QString url;
        int connectTimeoutMs = 2000;
        int statementTimeoutMs = 5000; // server side, and the client's wait for any answer
    };

    explicit PostgresConnection(Settings settings);
    ~PostgresConnection();
    PostgresConnection(const PostgresConnection &) = delete;
    PostgresConnection &operator=(const PostgresConnection &) = delete;

    // Connects, sets synchronous_commit=on and statement_timeout. An error naming host:port/db.
    QString connect();
    bool isOpen() const { return m_conn != nullptr; }
    // A connection idle since its last statement may have been ended by the server meanwhile (a
    // restart, pg_terminate_backend, idle_session_timeout): it said so and closed its side. This
    // reads that without waiting and closes this side too, so the caller connects again before it
    // sends anything. Nothing of the next statement went out on the dead connection, so running it
    // on the new one cannot run it twice; without this, the first statement after a restart failed.
    void closeIfServerLeft();
    void close();
    const QString &where() const { return m_target.where; }
    const QString &masked() const { return m_target.masked; }
    pg_conn *raw() { return m_conn; }

    // One statement (parameters in text format); the result, or null with *error set. A lost
    // connection closes this one and says "PostgreSQL at host:port is unavailable: ...". It
    // connects when closed, and first replaces a connection the server ended (closeIfServerLeft):
    // a caller that keeps state in its session (an advisory lock) must not take an answer as proof
    // that the state survived (PostgresNodeSlot::reassert takes its lock again instead).
    PgResult exec(const QByteArray &sql, const PgParams &params, QString *error);
    PgResult execPrepared(const QByteArray &name, const PgParams &params, QString *error);
    QString prepare(const QByteArray &name, const QByteArray &sql);
    // Simple-protocol script (several statements, no parameters): an error, or empty.
    QString run(const QByteArray &sql, const QString &doing);

    // Pipeline mode: queue statements, then sync and read every result in order.
    QString beginPipeline();
    QString queuePrepared(const QByteArray &name, const PgParams &params);
    QString queue(const QByteArray &sql);
    // Sends the sync and reads `count` results (one per queued statement) into `results`; an error
    // is a lost connection (then the connection is closed) — a failed statement is in its result.
    QString finishPipeline(int count, std::vector<PgResult> &results);

    // "PostgreSQL at host:port is unavailable: <why>" and the connection closed.
    QString lost(const QString &why);
    // A failed statement's message, naming the database and what was being done.
    QString describe(const pg_result *result, const QString &doing) const;
    bool inFailedTransaction() const;

private:
    QString waitFor(bool write, qint64 deadlineMs);
    QString flush(qint64 deadlineMs);
    PgResult nextResult(qint64 deadlineMs, QString *error);
    PgResult collect(const QString &doing, QString *error);
    qint64 deadline() const;

    Settings m_settings;
    PgTarget m_target;
    pg_conn *m_conn = nullptr;
};

} // namespace taxicore
