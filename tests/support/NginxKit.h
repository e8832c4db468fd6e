#pragma once

// nginx in front of TaxiCore nodes for a test (issue 17): deploy/nginx/taxicore.conf.in filled
// with a free loopback port and the nodes' ports, in a prefix folder of the build tree, run as
// `nginx -p PREFIX -c PREFIX/taxicore.conf` (daemon off, so it is our child). start() waits until
// it answers HTTP; stop() sends SIGTERM, then SIGKILL after the grace. The destructor stops it.
// Include after <QTest> when using TC_REQUIRE_TOOL with program().

#include <QByteArray>
#include <QList>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace taxicore::test {

class NginxProcess {
public:
    // How long start() waits for nginx to answer, and stop() for it to exit after SIGTERM.
    static constexpr int kStartTimeoutMs = 10'000;
    static constexpr int kStopGraceMs = 5'000;

    // Proxies to 127.0.0.1:<each of upstreamPorts>.
    explicit NginxProcess(QList<quint16> upstreamPorts);
    ~NginxProcess();
    NginxProcess(const NginxProcess &) = delete;
    NginxProcess &operator=(const NginxProcess &) = delete;

    // $TAXICORE_NGINX, else /usr/sbin/nginx, else nginx from PATH; empty when none.
    static QString program();
    // The template in the source tree.
    static QString templatePath();
    // The template with @LISTEN@ and @UPSTREAM_SERVERS@ filled (what cluster.sh writes too).
    static QByteArray fillTemplate(const QByteArray &text, const QString &listen, const QList<quint16> &upstreamPorts);

    bool start(int timeoutMs = kStartTimeoutMs);
    // SIGTERM, then SIGKILL after `graceMs`. Returns true when it exited on SIGTERM.
    bool stop(int graceMs = kStopGraceMs);
    bool isRunning() const { return m_process.state() == QProcess::Running; }

    QString host() const { return QStringLiteral("127.0.0.1"); }
    quint16 port() const { return m_port; }
    qint64 pid() const { return m_pid; }
    QString prefix() const { return m_prefix ? m_prefix->path() : QString(); }
    QString error() const { return m_error; }
    // nginx's error log so far (for failure messages).
    QByteArray errorLog() const;

private:
    bool startOnce(int timeoutMs);

    QList<quint16> m_upstreams;
    std::unique_ptr<QTemporaryDir> m_prefix;
    QProcess m_process;
    quint16 m_port = 0;
    qint64 m_pid = 0;
    QString m_error;
};

} // namespace taxicore::test
