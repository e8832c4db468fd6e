#include "ledger/PostgresConnection.h"

#include <chrono>
#include <libpq-fe.h>
#include <poll.h>

namespace taxicore {

namespace {

qint64 nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

QString trimmed(const char *message)
{
    return QString::fromUtf8(message ? message : "").trimmed();
}

} // namespace

PgParams &PgParams::add(qint64 value)
{
    m_values.emplace_back(QByteArray::number(value));
    return *this;
}

PgParams &PgParams::add(int value)
{
    m_values.emplace_back(QByteArray::number(value));
    return *this;
}

PgParams &PgParams::add(double value)
{
    m_values.emplace_back(QByteArray::number(value, 'g', 17)); // round-trips exactly
    return *this;
}

PgParams &PgParams::add(const QString &text)
{
    m_values.emplace_back(text.toUtf8());
    return *this;
}

PgParams &PgParams::addUtf8(QByteArray text)
{
    m_values.emplace_back(std::move(text));
    return *this;
}

PgParams &PgParams::add(std::optional<double> value)
{
    return value ? add(*value) : addNull();
}

PgParams &PgParams::addBytes(const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return addNull();
    m_values.emplace_back(QByteArray("\\x") + bytes.toHex());
    return *this;
}

PgParams &PgParams::addNull()
{
    m_values.emplace_back(std::nullopt);
    return *this;
}

std::vector<const char *> PgParams::pointers() const
{
    std::vector<const char *> out;
    out.reserve(m_values.size());
    for (const auto &value : m_values)
        out.push_back(value ? value->constData() : nullptr);
    return out;
}

void PgResultDeleter::operator()(pg_result *result) const
{
    PQclear(result);
}

PgTarget describePostgresUrl(const QString &url)
{
    PgTarget target;
    char *parseError = nullptr;
    PQconninfoOption *options = PQconninfoParse(url.toUtf8().constData(), &parseError);
    if (!options) {
        target.error = QStringLiteral("invalid PostgreSQL URL: %1").arg(trimmed(parseError));
        PQfreemem(parseError);
        return target;
    }
    QString host, port, db, user;
    for (PQconninfoOption *o = options; o->keyword; ++o) {
        const QString value = QString::fromUtf8(o->val ? o->val : "");
        if (qstrcmp(o->keyword, "host") == 0 || (qstrcmp(o->keyword, "hostaddr") == 0 && host.isEmpty()))
            host = value;
        else if (qstrcmp(o->keyword, "port") == 0)
            port = value;
        else if (qstrcmp(o->keyword, "dbname") == 0)
            db = value;
        else if (qstrcmp(o->keyword, "user") == 0)
            user = value;
    }
    PQconninfoFree(options);
    // libpq's defaults, so the message names what it actually tries.
    if (host.isEmpty())
        host = QStringLiteral("localhost");
    if (port.isEmpty())
        port = QStringLiteral("5432");
    if (db.isEmpty())
        db = user.isEmpty() ? QStringLiteral("(user name)") : user;
    target.where = QStringLiteral("%1:%2/%3").arg(host, port, db);
    target.masked = QStringLiteral("postgresql://%1%2").arg(user.isEmpty() ? QString() : user + u'@', target.where);
    return target;
}

PostgresConnection::PostgresConnection(Settings settings)
    : m_settings(std::move(settings))
    , m_target(describePostgresUrl(m_settings.url))
{
}

PostgresConnection::~PostgresConnection()
{
    close();
}

void PostgresConnection::close()
{
    if (m_conn)
        PQfinish(m_conn);
    m_conn = nullptr;
}

qint64 PostgresConnection::deadline() const
{
    return nowMs() + std::max(1, m_settings.statementTimeoutMs);
}

QString PostgresConnection::lost(const QString &why)
{
    close();
    return QStringLiteral("PostgreSQL at %1 is unavailable: %2").arg(m_target.where, why);
}

QString PostgresConnection::connect()
{
    close();
    if (!m_target.error.isEmpty())
        return m_target.error;
    const qint64 until = nowMs() + std::max(1, m_settings.connectTimeoutMs);
    const QByteArray url = m_settings.url.toUtf8();
    const char *keywords[] = {"dbname", "application_name", nullptr};
    const char *values[] = {url.constData(), "taxicore", nullptr};
    m_conn = PQconnectStartParams(keywords, values, 1);
    if (!m_conn)
        return lost(QStringLiteral("out of memory"));
    if (PQstatus(m_conn) == CONNECTION_BAD)
        return lost(trimmed(PQerrorMessage(m_conn)));
    PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
    while (polling != PGRES_POLLING_OK) {
        if (polling == PGRES_POLLING_FAILED)
            return lost(trimmed(PQerrorMessage(m_conn)));
        if (QString error = waitFor(polling == PGRES_POLLING_WRITING, until); !error.isEmpty())
            return lost(QStringLiteral("no connection within %1 ms").arg(m_settings.connectTimeoutMs));
        polling = PQconnectPoll(m_conn);
    }
    if (PQsetnonblocking(m_conn, 1) != 0)
        return lost(trimmed(PQerrorMessage(m_conn)));
    // Durable commits whatever the server's default; no statement may run longer than our wait.
    return run(
        QStringLiteral("SET synchronous_commit = on; SET statement_timeout = %1; SET client_min_messages = warning")
            .arg(m_settings.statementTimeoutMs)
            .toUtf8(),
        QStringLiteral("setting up the session"));
}

void PostgresConnection::closeIfServerLeft()
{
    if (!m_conn)
        return;
    // An idle connection has nothing to read: one poll() that does not wait is all it costs.
    pollfd fd{PQsocket(m_conn), short(POLLIN | POLLRDHUP), 0};
    if (fd.fd < 0 || ::poll(&fd, 1, 0) < 0) {
        close();
        return;
    }
    if (fd.revents == 0)
        return;
    // The server's farewell (FATAL, then its end of the socket closed), or a notice; only the
    // first ends the connection.
    if ((fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) || PQconsumeInput(m_conn) == 0
        || PQstatus(m_conn) == CONNECTION_BAD)
        close();
}

// Waits until the socket is readable (or writable), reading what arrived; an error on timeout.
QString PostgresConnection::waitFor(bool write, qint64 deadlineMs)
{
    const qint64 left = deadlineMs - nowMs();
    if (left <= 0)
        return QStringLiteral("timeout");
    pollfd fd{PQsocket(m_conn), short(write ? (POLLOUT | POLLIN) : POLLIN), 0};
    if (fd.fd < 0)
        return QStringLiteral("no socket");
    const int ready = ::poll(&fd, 1, int(std::min<qint64>(left, 60000)));
    if (ready < 0 && errno != EINTR)
        return QStringLiteral("poll failed");
    if (ready == 0 && nowMs() >= deadlineMs)
        return QStringLiteral("timeout");
    return {};
}

QString PostgresConnection::flush(qint64 deadlineMs)
{
    for (;;) {
        const int pending = PQflush(m_conn);
        if (pending == 0)
            return {};
        if (pending < 0)
            return lost(trimmed(PQerrorMessage(m_conn)));
        if (!waitFor(true, deadlineMs).isEmpty())
            return lost(QStringLiteral("no answer within %1 ms").arg(m_settings.statementTimeoutMs));
        // The server may be waiting for us to read before it reads more (pipeline).
        if (PQconsumeInput(m_conn) == 0)
            return lost(trimmed(PQerrorMessage(m_conn)));
    }
}

PgResult PostgresConnection::nextResult(qint64 deadlineMs, QString *error)
{
    while (PQisBusy(m_conn)) {
        if (!waitFor(false, deadlineMs).isEmpty()) {
            *error = lost(QStringLiteral("no answer within %1 ms").arg(m_settings.statementTimeoutMs));
            return nullptr;
        }
        if (PQconsumeInput(m_conn) == 0) {
            *error = lost(trimmed(PQerrorMessage(m_conn)));
            return nullptr;
        }
    }
    return PgResult(PQgetResult(m_conn));
}

// The last result of a sent statement (outside pipeline mode), after draining the others.
PgResult PostgresConnection::collect(const QString &doing, QString *error)
{
    const qint64 until = deadline();
    if (QString failed = flush(until); !failed.isEmpty()) {
        *error = failed;
        return nullptr;
    }
    PgResult last;
    for (;;) {
        PgResult result = nextResult(until, error);
        if (!error->isEmpty())
            return nullptr;
        if (!result)
            break;
        last = std::move(result);
    }
    if (PQstatus(m_conn) == CONNECTION_BAD) {
        *error = lost(trimmed(PQerrorMessage(m_conn)));
        return nullptr;
    }
    const ExecStatusType status = last ? PQresultStatus(last.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        *error = describe(last.get(), doing);
        return nullptr;
    }
    return last;
}

PgResult PostgresConnection::exec(const QByteArray &sql, const PgParams &params, QString *error)
{
    error->clear();
    closeIfServerLeft();
    if (!m_conn && !(*error = connect()).isEmpty())
        return nullptr;
    const std::vector<const char *> values = params.pointers();
    if (!PQsendQueryParams(m_conn, sql.constData(), params.count(), nullptr, values.data(), nullptr, nullptr, 0)) {
        *error = lost(trimmed(PQerrorMessage(m_conn)));
        return nullptr;
    }
    return collect(QStringLiteral("querying"), error);
}

PgResult PostgresConnection::execPrepared(const QByteArray &name, const PgParams &params, QString *error)
{
    error->clear();
    const std::vector<const char *> values = params.pointers();
    if (!PQsendQueryPrepared(m_conn, name.constData(), params.count(), values.data(), nullptr, nullptr, 0)) {
        *error = lost(trimmed(PQerrorMessage(m_conn)));
        return nullptr;
    }
    return collect(QStringLiteral("running %1").arg(QString::fromUtf8(name)), error);
}

QString PostgresConnection::prepare(const QByteArray &name, const QByteArray &sql)
{
    if (!PQsendPrepare(m_conn, name.constData(), sql.constData(), 0, nullptr))
        return lost(trimmed(PQerrorMessage(m_conn)));
    QString error;
    collect(QStringLiteral("preparing %1").arg(QString::fromUtf8(name)), &error);
    return error;
}

QString PostgresConnection::run(const QByteArray &sql, const QString &doing)
{
    if (!PQsendQuery(m_conn, sql.constData()))
        return lost(trimmed(PQerrorMessage(m_conn)));
    QString error;
    collect(doing, &error);
    return error;
}

QString PostgresConnection::beginPipeline()
{
    if (PQenterPipelineMode(m_conn) != 1)
        return lost(trimmed(PQerrorMessage(m_conn)));
    return {};
}

QString PostgresConnection::queuePrepared(const QByteArray &name, const PgParams &params)
{
    const std::vector<const char *> values = params.pointers();
    if (!PQsendQueryPrepared(m_conn, name.constData(), params.count(), values.data(), nullptr, nullptr, 0))
        return lost(trimmed(PQerrorMessage(m_conn)));
    // Keep the socket moving so a large batch never fills both directions' buffers.
    if (PQflush(m_conn) < 0)
        return lost(trimmed(PQerrorMessage(m_conn)));
    return {};
}

QString PostgresConnection::queue(const QByteArray &sql)
{
    if (!PQsendQueryParams(m_conn, sql.constData(), 0, nullptr, nullptr, nullptr, nullptr, 0))
        return lost(trimmed(PQerrorMessage(m_conn)));
    return {};
}

QString PostgresConnection::finishPipeline(int count, std::vector<PgResult> &results)
{
    results.clear();
    if (PQpipelineSync(m_conn) != 1)
        return lost(trimmed(PQerrorMessage(m_conn)));
    const qint64 until = deadline();
    if (QString error = flush(until); !error.isEmpty())
        return error;
    QString error;
    for (int i = 0; i < count; ++i) {
        if (PQstatus(m_conn) == CONNECTION_BAD)
            return lost(trimmed(PQerrorMessage(m_conn)));
        PgResult result = nextResult(until, &error);
        if (!error.isEmpty())
            return error;
        if (!result)
            return lost(trimmed(PQerrorMessage(m_conn)));
        // Each statement's results end with a null.
        for (PgResult more = nextResult(until, &error); more; more = nextResult(until, &error)) {
        }
        if (!error.isEmpty())
            return error;
        results.push_back(std::move(result));
    }
    PgResult sync = nextResult(until, &error);
    if (!error.isEmpty())
        return error;
    if (PQstatus(m_conn) == CONNECTION_BAD)
        return lost(trimmed(PQerrorMessage(m_conn)));
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC)
        return lost(QStringLiteral("unexpected answer to a pipeline sync: %1").arg(trimmed(PQerrorMessage(m_conn))));
    if (PQexitPipelineMode(m_conn) != 1)
        return lost(trimmed(PQerrorMessage(m_conn)));
    return {};
}

bool PostgresConnection::inFailedTransaction() const
{
    return m_conn && PQtransactionStatus(m_conn) == PQTRANS_INERROR;
}

QString PostgresConnection::describe(const pg_result *result, const QString &doing) const
{
    const QString message = result ? trimmed(PQresultErrorMessage(result)) : trimmed(PQerrorMessage(m_conn));
    return QStringLiteral("ledger PostgreSQL %1: %2: %3").arg(m_target.where, doing, message);
}

} // namespace taxicore
