#include "cluster/PostgresSession.h"

#include <QUrl>

#include <libpq-fe.h>

namespace taxicore {

PostgresSession::PostgresSession(QString url, int timeoutMs)
    : m_url(std::move(url))
    , m_timeoutMs(timeoutMs)
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
    if (m_conn && PQstatus(m_conn) == CONNECTION_OK)
        return true;
    disconnect();
    // The URI names the server; the keywords bound the waits. A dead peer is noticed by TCP
    // keepalives within seconds, not the kernel's two hours.
    const QByteArray uri = m_url.toUtf8();
    const QByteArray connectTimeout = QByteArray::number(std::max(1, (m_timeoutMs + 999) / 1000));
    const QByteArray options = "-c statement_timeout=" + QByteArray::number(m_timeoutMs);
    const char *keys[] = {"dbname",           "connect_timeout",  "options", "keepalives_idle", "keepalives_interval",
                          "keepalives_count", "application_name", nullptr};
    const char *values[] = {
        uri.constData(), connectTimeout.constData(), options.constData(), "5", "1", "3", "taxicore-cluster", nullptr};
    m_conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
    if (!m_conn || PQstatus(m_conn) != CONNECTION_OK)
        return fail(m_conn ? QString::fromUtf8(PQerrorMessage(m_conn)) : QStringLiteral("out of memory"));
    return true;
}

std::optional<QByteArray> PostgresSession::queryValue(const char *sql)
{
    if (!ensureConnected())
        return std::nullopt;
    PGresult *result = PQexec(m_conn, sql);
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK || PQntuples(result) < 1) {
        const QString error = result && status != PGRES_TUPLES_OK ? QString::fromUtf8(PQresultErrorMessage(result))
                                                                  : QStringLiteral("no row");
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
    if (!ensureConnected())
        return false;
    PGresult *result = PQexec(m_conn, sql);
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    const QString error = ok ? QString() : QString::fromUtf8(result ? PQresultErrorMessage(result) : "no result");
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
