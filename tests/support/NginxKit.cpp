#include "NginxKit.h"

#include "DieWithTest.h"
#include "HttpClient.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

namespace taxicore::test {

namespace {

// A port taken from the kernel and given back: nginx binds it a moment later. Another process may
// take it in between; start() then tries again with a fresh one.
constexpr int kStartAttempts = 3;
constexpr int kProbePollMs = 50;

quint16 freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

} // namespace

NginxProcess::NginxProcess(QList<quint16> upstreamPorts)
    : m_upstreams(std::move(upstreamPorts))
{
    m_process.setProcessChannelMode(QProcess::MergedChannels);
}

NginxProcess::~NginxProcess()
{
    stop();
}

QString NginxProcess::program()
{
    const QString fromEnv = qEnvironmentVariable("TAXICORE_NGINX");
    if (!fromEnv.isEmpty())
        return fromEnv;
    if (QFileInfo(QStringLiteral("/usr/sbin/nginx")).isExecutable())
        return QStringLiteral("/usr/sbin/nginx");
    return QStandardPaths::findExecutable(QStringLiteral("nginx"));
}

QString NginxProcess::templatePath()
{
    return QStringLiteral(TAXICORE_TEST_SOURCE_DIR "/deploy/nginx/taxicore.conf.in");
}

QByteArray NginxProcess::fillTemplate(const QByteArray &text, const QString &listen,
                                      const QList<quint16> &upstreamPorts)
{
    QByteArray servers;
    for (const quint16 port : upstreamPorts)
        servers += "        server 127.0.0.1:" + QByteArray::number(port) + " max_fails=1 fail_timeout=5s;\n";
    servers.chop(1); // the template's line ends after the placeholder
    QByteArray filled = text;
    filled.replace("@LISTEN@", listen.toUtf8());
    filled.replace("@UPSTREAM_SERVERS@", servers);
    return filled;
}

bool NginxProcess::start(int timeoutMs)
{
    m_error.clear();
    if (isRunning()) {
        m_error = QStringLiteral("already running");
        return false;
    }
    if (program().isEmpty()) {
        m_error = QStringLiteral("nginx not found (apt-get install nginx-light)");
        return false;
    }
    for (int attempt = 0; attempt < kStartAttempts; ++attempt)
        if (startOnce(timeoutMs))
            return true;
    return false;
}

bool NginxProcess::startOnce(int timeoutMs)
{
    QFile in(templatePath());
    if (!in.open(QIODevice::ReadOnly)) {
        m_error = QStringLiteral("cannot read %1").arg(templatePath());
        return false;
    }
    const QString base = QStringLiteral(TAXICORE_TEST_BUILD_DIR "/tests/nginx");
    QDir().mkpath(base);
    m_prefix = std::make_unique<QTemporaryDir>(base + QStringLiteral("/nginx-XXXXXX"));
    QDir prefix(m_prefix->path());
    if (!m_prefix->isValid() || !prefix.mkpath(QStringLiteral("logs")) || !prefix.mkpath(QStringLiteral("temp"))) {
        m_error = QStringLiteral("cannot make a prefix folder under %1").arg(base);
        return false;
    }
    m_port = freeLoopbackPort();
    const QString conf = prefix.filePath(QStringLiteral("taxicore.conf"));
    QFile out(conf);
    if (m_port == 0 || !out.open(QIODevice::WriteOnly)
        || out.write(fillTemplate(in.readAll(), QStringLiteral("127.0.0.1:%1").arg(m_port), m_upstreams)) < 0) {
        m_error = QStringLiteral("cannot write %1").arg(conf);
        return false;
    }
    out.close();
    // SIGTERM: nginx's fast shutdown, its master stops its workers.
    m_process.setChildProcessModifier([testPid = ::getpid()] { dieWithTest(testPid, SIGTERM); });
    m_process.start(program(), {QStringLiteral("-p"), prefix.path(), QStringLiteral("-c"), conf, QStringLiteral("-e"),
                                prefix.filePath(QStringLiteral("logs/error.log"))});
    if (!m_process.waitForStarted(timeoutMs)) {
        m_error = QStringLiteral("cannot start %1: %2").arg(program(), m_process.errorString());
        return false;
    }
    m_pid = m_process.processId();
    // Any whole HTTP answer will do (a 502 too, while no node is up yet): nginx is listening.
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (!isRunning())
            break;
        HttpClient probe(host(), m_port, 1000);
        if (probe.request("GET", "/healthz").complete)
            return true;
        QThread::msleep(kProbePollMs);
    }
    m_error = QStringLiteral("nginx did not answer on port %1 within %2 ms; output: %3; error log: %4")
                  .arg(m_port)
                  .arg(timeoutMs)
                  .arg(QString::fromLocal8Bit(m_process.readAll()), QString::fromLocal8Bit(errorLog()));
    stop(1000);
    return false;
}

bool NginxProcess::stop(int graceMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return false;
    m_process.terminate(); // SIGTERM: nginx's fast shutdown
    if (m_process.waitForFinished(graceMs))
        return true;
    m_process.kill();
    m_process.waitForFinished(graceMs);
    return false;
}

QByteArray NginxProcess::errorLog() const
{
    QFile log(QDir(prefix()).filePath(QStringLiteral("logs/error.log")));
    return log.open(QIODevice::ReadOnly) ? log.readAll().right(8192) : QByteArray();
}

} // namespace taxicore::test
