#pragma once

// Helpers for the execution-mode tests: the admin API (runtime, workers, events), process
// checks by pid, bounded polling, and wrk as the load generator (its summary parsed so every
// failed request is visible). Include after <QTest>.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>
#include <csignal>
#include <functional>
#include <sys/types.h>

namespace taxicore::test::rt {

// Every admin call on its own connection: in processes mode a connection may be served by any
// worker, and a keep-alive connection may be closed by a switch between two calls.
inline HttpResponse call(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                         const QByteArray &body = {}, int timeoutMs = 10'000)
{
    HttpClient http(server.host(), server.port(), timeoutMs);
    return http.request(method, path, body);
}

inline QJsonObject getJson(const ServerProcess &server, const QByteArray &path)
{
    return call(server, "GET", path).json();
}

inline HttpResponse putRuntime(const ServerProcess &server, const QJsonObject &body)
{
    return call(server, "PUT", "/admin/v1/runtime", QJsonDocument(body).toJson(QJsonDocument::Compact));
}

struct WorkerInfo {
    int index = 0;
    qint64 pid = 0;
    QString state;
    qint64 restarts = 0;
    qint64 requests = 0;
    qint64 openConnections = 0;
    qint64 inFlight = 0;
};

inline QList<WorkerInfo> workers(const ServerProcess &server, bool *ok = nullptr)
{
    const HttpResponse r = call(server, "GET", "/admin/v1/workers");
    if (ok)
        *ok = r.complete && r.status == 200 && r.json().value(QStringLiteral("workers")).isArray();
    QList<WorkerInfo> out;
    for (const QJsonValue &v : r.json().value(QStringLiteral("workers")).toArray()) {
        const QJsonObject o = v.toObject();
        WorkerInfo w;
        w.index = o.value(QStringLiteral("index")).toInt();
        w.pid = qint64(o.value(QStringLiteral("pid")).toDouble());
        w.state = o.value(QStringLiteral("state")).toString();
        w.restarts = qint64(o.value(QStringLiteral("restarts")).toDouble());
        w.requests = qint64(o.value(QStringLiteral("requests")).toDouble());
        w.openConnections = qint64(o.value(QStringLiteral("open_connections")).toDouble());
        w.inFlight = qint64(o.value(QStringLiteral("in_flight")).toDouble());
        out.append(w);
    }
    return out;
}

inline QList<WorkerInfo> serving(const ServerProcess &server)
{
    QList<WorkerInfo> out;
    for (const WorkerInfo &w : workers(server))
        if (w.state == QStringLiteral("serving") && w.pid > 0)
            out.append(w);
    return out;
}

inline WorkerInfo worker(const ServerProcess &server, int index)
{
    for (const WorkerInfo &w : workers(server))
        if (w.index == index)
            return w;
    return {};
}

inline QJsonArray events(const ServerProcess &server)
{
    return getJson(server, "/admin/v1/events").value(QStringLiteral("events")).toArray();
}

inline QStringList eventsOfKind(const ServerProcess &server, const QString &kind)
{
    QStringList texts;
    for (const QJsonValue &v : events(server))
        if (v.toObject().value(QStringLiteral("kind")).toString() == kind)
            texts.append(v.toObject().value(QStringLiteral("text")).toString());
    return texts;
}

inline QString describeEvents(const ServerProcess &server)
{
    QStringList lines;
    for (const QJsonValue &v : events(server))
        lines.prepend(v.toObject().value(QStringLiteral("kind")).toString() + QLatin1Char(' ')
                      + v.toObject().value(QStringLiteral("text")).toString());
    return lines.join(QStringLiteral(" | "));
}

// The value of an unlabelled metric in GET /metrics (taxicore_open_connections, ...); -1 if absent.
inline double metric(const ServerProcess &server, const QString &name)
{
    const QRegularExpression line(QStringLiteral("^%1\\s+([0-9.e+-]+)\\s*$").arg(QRegularExpression::escape(name)),
                                  QRegularExpression::MultilineOption);
    const QRegularExpressionMatch m = line.match(QString::fromUtf8(call(server, "GET", "/metrics").body));
    return m.hasMatch() ? m.captured(1).toDouble() : -1;
}

inline bool waitForServingWorkers(const ServerProcess &server, int count, int timeoutMs)
{
    return waitUntil([&] { return serving(server).size() == count; }, timeoutMs, 100);
}

// `count` workers serve, and the primary passes them connections: each has answered a request
// (slot state "serving" shows before the primary's dispatcher has the worker's link).
inline bool waitForWorkersTakingConnections(const ServerProcess &server, int count, int timeoutMs)
{
    return waitUntil(
        [&] {
            const QList<WorkerInfo> up = serving(server);
            if (up.size() != count)
                return false;
            for (const WorkerInfo &w : up)
                if (w.requests == 0)
                    return false;
            return true;
        },
        timeoutMs, 50);
}

// True while `pid` exists and is not a zombie.
inline bool pidAlive(qint64 pid)
{
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0)
        return false;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close < 0 || close + 2 >= line.size() || line.at(close + 2) != 'Z';
}

// ---- wrk ----------------------------------------------------------------------------------

struct WrkResult {
    bool finished = false;
    qint64 requests = -1;
    qint64 connectErrors = 0, readErrors = 0, writeErrors = 0, timeouts = 0;
    qint64 non2xx = 0;
    QByteArray output;

    qint64 socketErrors() const { return connectErrors + readErrors + writeErrors + timeouts; }
    qint64 failed() const { return socketErrors() + non2xx; }
    QByteArray describe() const
    {
        return QByteArray("wrk: ") + QByteArray::number(requests) + " requests, socket errors connect "
               + QByteArray::number(connectErrors) + " read " + QByteArray::number(readErrors) + " write "
               + QByteArray::number(writeErrors) + " timeout " + QByteArray::number(timeouts) + ", non-2xx "
               + QByteArray::number(non2xx) + (finished ? "" : " (did not finish)") + "\n" + output;
    }
};

inline WrkResult parseWrk(const QByteArray &output)
{
    WrkResult r;
    r.output = output;
    const QString text = QString::fromUtf8(output);
    const auto requests = QRegularExpression(QStringLiteral("(\\d+) requests in")).match(text);
    if (requests.hasMatch())
        r.requests = requests.captured(1).toLongLong();
    const auto errors =
        QRegularExpression(QStringLiteral("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)"))
            .match(text);
    if (errors.hasMatch()) {
        r.connectErrors = errors.captured(1).toLongLong();
        r.readErrors = errors.captured(2).toLongLong();
        r.writeErrors = errors.captured(3).toLongLong();
        r.timeouts = errors.captured(4).toLongLong();
    }
    const auto non2xx = QRegularExpression(QStringLiteral("Non-2xx or 3xx responses: (\\d+)")).match(text);
    if (non2xx.hasMatch())
        r.non2xx = non2xx.captured(1).toLongLong();
    return r;
}

// `wrk -t1 -cN -dS --timeout 5s URL` as a child process; finish() waits (bounded) and parses.
// The destructor kills it if it is still running.
class Wrk {
public:
    static QString program() { return QStandardPaths::findExecutable(QStringLiteral("wrk")); }

    bool start(const QUrl &base, const QByteArray &path, int connections, int seconds)
    {
        m_seconds = seconds;
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        m_process.start(program(), {QStringLiteral("-t1"), QStringLiteral("-c%1").arg(connections),
                                    QStringLiteral("-d%1s").arg(seconds), QStringLiteral("--timeout"),
                                    QStringLiteral("5s"), base.toString() + QString::fromLatin1(path)});
        return m_process.waitForStarted(5000);
    }

    WrkResult finish()
    {
        WrkResult r;
        const bool done = m_process.waitForFinished((m_seconds + 20) * 1000);
        if (!done) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
        r = parseWrk(m_process.readAll());
        r.finished =
            done && m_process.exitStatus() == QProcess::NormalExit && m_process.exitCode() == 0 && r.requests >= 0;
        return r;
    }

    ~Wrk()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

private:
    QProcess m_process;
    int m_seconds = 0;
};

} // namespace taxicore::test::rt
