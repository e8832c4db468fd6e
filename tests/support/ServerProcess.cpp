#include "ServerProcess.h"

#include "DieWithTest.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <csignal>
#include <sys/types.h>

namespace taxicore::test {

ServerProcess::ServerProcess(QStringList extraArgs)
    : m_args(std::move(extraArgs))
{
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    if (m_logDir.isValid())
        m_process.setStandardErrorFile(m_logDir.filePath(QStringLiteral("stderr.log")));
}

ServerProcess::~ServerProcess()
{
    stop();
}

QString ServerProcess::binDir()
{
    const QByteArray fromEnv = qgetenv("TAXICORE_BIN_DIR");
    if (!fromEnv.isEmpty())
        return QString::fromLocal8Bit(fromEnv);
    return QStringLiteral(TAXICORE_TEST_DEFAULT_BIN_DIR);
}

QString ServerProcess::binary()
{
    return QDir(binDir()).filePath(QStringLiteral("taxicore-server"));
}

void ServerProcess::setEnvironment(const QStringList &nameEqualsValue)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const QString &entry : nameEqualsValue) {
        const qsizetype equals = entry.indexOf(u'=');
        environment.insert(entry.left(equals), entry.mid(equals + 1));
    }
    m_process.setProcessEnvironment(environment);
}

bool ServerProcess::start(int timeoutMs)
{
    m_error.clear();
    if (isRunning()) {
        m_error = QStringLiteral("already running");
        return false;
    }
    QStringList args{QStringLiteral("--port"), QStringLiteral("0")};
    args += m_args;
    // Each server gets its own ledger unless the test chose one: bookings restored from another
    // test's run would take cars.
    if (!m_args.contains(QStringLiteral("--data-dir")) && m_logDir.isValid())
        args += {QStringLiteral("--data-dir"), m_logDir.filePath(QStringLiteral("data"))};
    // SIGKILL: its worker processes follow it (they have PR_SET_PDEATHSIG on it themselves).
    m_process.setChildProcessModifier([testPid = ::getpid(), modifier = m_childModifier] {
        if (modifier)
            modifier();
        dieWithTest(testPid, SIGKILL);
    });
    m_process.start(binary(), args);
    if (!m_process.waitForStarted(timeoutMs)) {
        m_error = QStringLiteral("cannot start %1: %2").arg(binary(), m_process.errorString());
        return false;
    }
    m_pid = m_process.processId();
    QDeadlineTimer deadline(timeoutMs);
    while (!m_process.canReadLine()) {
        if (deadline.hasExpired() || m_process.state() != QProcess::Running) {
            m_error = QStringLiteral("no `listening on` line within %1 ms (state %2); stderr: %3")
                          .arg(timeoutMs)
                          .arg(int(m_process.state()))
                          .arg(QString::fromLocal8Bit(stderrText()));
            stop(1000);
            return false;
        }
        m_process.waitForReadyRead(int(qMax<qint64>(1, qMin<qint64>(100, deadline.remainingTime()))));
    }
    m_firstLine = m_process.readLine();
    if (m_firstLine.endsWith('\n'))
        m_firstLine.chop(1);
    // The host is an IPv4 address or a bracketed IPv6 one: http://[::1]:PORT.
    static const QRegularExpression pattern(
        QStringLiteral("^listening on http://(?:([^:/\\[\\]]+)|\\[([0-9A-Fa-f:.]+)\\]):(\\d+)$"));
    const QRegularExpressionMatch match = pattern.match(QString::fromUtf8(m_firstLine));
    if (!match.hasMatch()) {
        m_error = QStringLiteral("unexpected first line: \"%1\"").arg(QString::fromUtf8(m_firstLine));
        stop(1000);
        return false;
    }
    m_host = match.hasCaptured(1) ? match.captured(1) : match.captured(2);
    m_port = quint16(match.captured(3).toUInt());
    m_url = QUrl();
    m_url.setScheme(QStringLiteral("http"));
    m_url.setHost(m_host);
    m_url.setPort(m_port);
    return true;
}

bool ServerProcess::isRunning() const
{
    return m_process.state() != QProcess::NotRunning;
}

bool ServerProcess::terminate()
{
    if (!isRunning() || m_pid <= 0)
        return false;
    return ::kill(pid_t(m_pid), SIGTERM) == 0;
}

bool ServerProcess::waitForExit(int timeoutMs)
{
    if (!isRunning())
        return true;
    return m_process.waitForFinished(timeoutMs);
}

int ServerProcess::stop(int graceMs)
{
    if (!isRunning())
        return m_pid > 0 && m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    terminate();
    if (m_process.waitForFinished(graceMs))
        return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    ::kill(pid_t(m_pid), SIGKILL);
    m_process.waitForFinished(5000);
    return -1;
}

int ServerProcess::exitCode() const
{
    return m_process.exitCode();
}

QProcess::ExitStatus ServerProcess::exitStatus() const
{
    return m_process.exitStatus();
}

QByteArray ServerProcess::stderrText()
{
    QFile log(m_logDir.filePath(QStringLiteral("stderr.log")));
    if (!log.open(QIODevice::ReadOnly))
        return {};
    if (log.size() > 8192)
        log.seek(log.size() - 8192);
    return log.readAll();
}

ServerProcess::RunResult ServerProcess::run(const QStringList &args, int timeoutMs,
                                            const std::function<void()> &childModifier)
{
    RunResult result;
    QProcess process;
    if (childModifier)
        process.setChildProcessModifier(childModifier);
    process.start(binary(), args);
    if (!process.waitForStarted(timeoutMs))
        return result;
    if (!process.waitForFinished(timeoutMs)) {
        ::kill(pid_t(process.processId()), SIGKILL);
        process.waitForFinished(5000);
        result.out = process.readAllStandardOutput();
        result.err = process.readAllStandardError();
        return result;
    }
    result.finished = process.exitStatus() == QProcess::NormalExit;
    result.exitCode = process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

} // namespace taxicore::test
