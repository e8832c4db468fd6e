#include "cluster/PostgresSession.h"

#include <QUrl>

#include <algorithm>
#include <cerrno>
#include <libpq-fe.h>
#include <poll.h>

namespace taxicore {

namespace {

// The kernel's view of a dead server, for a connection this side is not waiting on (a ClusterIds
// session idle between id blocks): the first probe after kKeepaliveIdleS of silence, then one
// every kKeepaliveIntervalS, closed after kKeepaliveCount unanswered.
constexpr const char *kKeepaliveIdleS = "5";
constexpr const char *kKeepaliveIntervalS = "1";
constexpr const char *kKeepaliveCount = "3";

} // namespace

PostgresSession::PostgresSession(QString url, int timeoutMs)
    : m_url(std::move(url))
    , m_timeoutMs(std::max(1, timeoutMs))
{
}

PostgresSession::~PostgresSession()
{
    disconnect();
}

QString PostgresSession::location() const
{
    const QUrl url(m_url);
    return QStringLiteral("PostgreSQL at %1:%2%3").arg(url.host()).arg(url.port(5432)).arg(url.path());
}

bool PostgresSession::fail(const QString &what)
{
    m_lastError = QStringLiteral("%1 is unavailable: %2").arg(location(), what.trimmed());
    disconnect();
    return false;
}

bool PostgresSession::ensureConnected()
{
    return connectBy(Clock::now() + std::chrono::milliseconds(m_timeoutMs));
}

bool PostgresSession::waitForSocket(bool write, Clock::time_point deadline)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0)
            return false;
        pollfd fd{PQsocket(m_conn), short(write ? POLLOUT : POLLIN), 0};
        if (fd.fd < 0)
            return false;
        const int ready = ::poll(&fd, 1, int(std::min<long long>(left, 60'000)));
        if (ready > 0)
            return true;
        if (ready < 0 && errno != EINTR)
            return false;
    }
}

bool PostgresSession::connectBy(Clock::time_point deadline)
{
    if (m_conn && PQstatus(m_conn) == CONNECTION_OK)
        return true;
    disconnect();
    // The URI names the server; the keywords bound the server's side of every wait
    // (statement_timeout) and the kernel's (keepalives, tcp_user_timeout: unacknowledged data
    // closes the connection after the session's timeout).
    const QByteArray uri = m_url.toUtf8();
    const QByteArray options = "-c statement_timeout=" + QByteArray::number(m_timeoutMs);
    const QByteArray userTimeout = QByteArray::number(m_timeoutMs);
    const char *keys[] = {"dbname",
                          "options",
                          "keepalives",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "tcp_user_timeout",
                          "application_name",
                          nullptr};
    const char *values[] = {uri.constData(),         options.constData(), "1",
                            kKeepaliveIdleS,         kKeepaliveIntervalS, kKeepaliveCount,
                            userTimeout.constData(), "taxicore-cluster",  nullptr};
    m_conn = PQconnectStartParams(keys, values, /*expand_dbname=*/1);
    if (!m_conn)
        return fail(QStringLiteral("out of memory"));
    if (PQstatus(m_conn) == CONNECTION_BAD)
        return fail(QString::fromUtf8(PQerrorMessage(m_conn)));
    PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
    while (polling != PGRES_POLLING_OK) {
        if (polling == PGRES_POLLING_FAILED)
            return fail(QString::fromUtf8(PQerrorMessage(m_conn)));
        if (!waitForSocket(polling == PGRES_POLLING_WRITING, deadline))
            return fail(QStringLiteral("no connection within %1 ms").arg(m_timeoutMs));
        polling = PQconnectPoll(m_conn);
    }
    if (PQsetnonblocking(m_conn, 1) != 0)
        return fail(QString::fromUtf8(PQerrorMessage(m_conn)));
    return true;
}

PGresult *PostgresSession::run(const char *sql, Clock::time_point deadline)
{
    if (!connectBy(deadline))
        return nullptr;
    if (!PQsendQuery(m_conn, sql)) {
        fail(QString::fromUtf8(PQerrorMessage(m_conn)));
        return nullptr;
    }
    const auto noAnswer = [this] {
        // A silent server: nothing more is waited for on this connection (its answer, if it ever
        // comes, belongs to a query given up on), so it is dropped; the next call reconnects.
        fail(QStringLiteral("no answer within %1 ms").arg(m_timeoutMs));
        return nullptr;
    };
    for (int pending = PQflush(m_conn); pending != 0; pending = PQflush(m_conn)) {
        if (pending < 0) {
            fail(QString::fromUtf8(PQerrorMessage(m_conn)));
            return nullptr;
        }
        if (!waitForSocket(true, deadline))
            return noAnswer();
    }
    PGresult *last = nullptr;
    for (;;) {
        while (PQisBusy(m_conn)) {
            if (!waitForSocket(false, deadline)) {
                PQclear(last);
                return noAnswer();
            }
            if (PQconsumeInput(m_conn) == 0) {
                PQclear(last);
                fail(QString::fromUtf8(PQerrorMessage(m_conn)));
                return nullptr;
            }
        }
        PGresult *result = PQgetResult(m_conn);
        if (!result)
            break;
        PQclear(last);
        last = result;
    }
    if (!last)
        fail(QString::fromUtf8(PQerrorMessage(m_conn)));
    return last;
}

std::optional<QByteArray> PostgresSession::queryValue(const char *sql)
{
    return queryValue(sql, Clock::now() + std::chrono::milliseconds(m_timeoutMs));
}

std::optional<QByteArray> PostgresSession::queryValue(const char *sql, Clock::time_point deadline)
{
    PGresult *result = run(sql, deadline);
    if (!result)
        return std::nullopt;
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_TUPLES_OK || PQntuples(result) < 1) {
        const QString error =
            status != PGRES_TUPLES_OK ? QString::fromUtf8(PQresultErrorMessage(result)) : QStringLiteral("no row");
        PQclear(result);
        fail(error);
        return std::nullopt;
    }
    QByteArray value(PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
    PQclear(result);
    return value;
}

bool PostgresSession::execute(const char *sql)
{
    return execute(sql, Clock::now() + std::chrono::milliseconds(m_timeoutMs));
}

bool PostgresSession::execute(const char *sql, Clock::time_point deadline)
{
    PGresult *result = run(sql, deadline);
    if (!result)
        return false;
    const ExecStatusType status = PQresultStatus(result);
    const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    const QString error = ok ? QString() : QString::fromUtf8(PQresultErrorMessage(result));
    PQclear(result);
    return ok || fail(error);
}

void PostgresSession::disconnect()
{
    if (m_conn)
        PQfinish(m_conn);
    m_conn = nullptr;
}

} // namespace taxicore
