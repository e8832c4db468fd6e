#include "RedisKit.h"

#include "DieWithTest.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <csignal>
#include <sys/prctl.h>

namespace taxicore::test {

namespace {

// Port 0 on loopback gives a port nobody holds right now; redis-server binds it a moment later.
int freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

constexpr int kLaunchAttempts = 5; // another process may take the free port before redis-server does

} // namespace

QString RedisKit::program()
{
    const QString fromCMake = qEnvironmentVariable("TAXICORE_REDIS_SERVER");
    if (!fromCMake.isEmpty() && QFileInfo(fromCMake).isExecutable())
        return fromCMake;
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("redis-server"));
    if (!onPath.isEmpty())
        return onPath;
    return QStandardPaths::findExecutable(QStringLiteral("redis-server"), {QStringLiteral("/usr/bin")});
}

RedisKit::~RedisKit()
{
    stop();
}

bool RedisKit::start(QStringList extraArgs, QString *error)
{
    stop();
    m_extraArgs = std::move(extraArgs);
    QString why;
    for (int attempt = 0; attempt < kLaunchAttempts; ++attempt) {
        m_port = freeLoopbackPort();
        if (m_port != 0 && launch(&why))
            return true;
    }
    if (error)
        *error = why;
    return false;
}

bool RedisKit::launch(QString *error)
{
    const QString program = RedisKit::program();
    if (program.isEmpty()) {
        *error = QStringLiteral("redis-server not found (apt-get install redis-server)");
        return false;
    }
    // In the build tree, next to the test binaries: nothing lands in the user's home or /tmp.
    m_folder = QCoreApplication::applicationDirPath() + QStringLiteral("/redis-kit/%1").arg(m_port);
    QDir().mkpath(m_folder);
    QStringList args{QStringLiteral("--port"),       QString::number(m_port),  QStringLiteral("--bind"),
                     QStringLiteral("127.0.0.1"),    QStringLiteral("--save"), QString(),
                     QStringLiteral("--appendonly"), QStringLiteral("no"),     QStringLiteral("--daemonize"),
                     QStringLiteral("no"),           QStringLiteral("--dir"),  m_folder};
    args += m_extraArgs;
    m_process.setProgram(program);
    m_process.setArguments(args);
    m_process.setWorkingDirectory(m_folder);
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.setStandardOutputFile(m_folder + QStringLiteral("/redis.log"), QIODevice::Append);
    // If the test process dies (a crash, a ctest timeout), the kernel kills the server too.
    m_process.setChildProcessModifier([testPid = ::getpid()] { dieWithTest(testPid, SIGKILL); });
    m_process.start();
    if (!m_process.waitForStarted(kStartTimeoutMs)) {
        *error = QStringLiteral("%1 did not start: %2").arg(program, m_process.errorString());
        return false;
    }
    if (waitForPing(kStartTimeoutMs))
        return true;
    *error = QStringLiteral("redis-server on port %1 did not answer PING within %2 ms; its log: %3")
                 .arg(m_port)
                 .arg(kStartTimeoutMs)
                 .arg(QString::fromUtf8(log().right(2000)));
    stop();
    return false;
}

bool RedisKit::waitForPing(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (m_process.state() == QProcess::NotRunning)
            return false; // it exited (port taken, bad argument): the log says why
        // With --requirepass it answers NOAUTH: up all the same.
        const QByteArray reply = rawCommand("PING", 200);
        if (reply.startsWith("+PONG") || reply.startsWith("-NOAUTH"))
            return true;
        QThread::msleep(20);
    }
    return false;
}

bool RedisKit::stop()
{
    if (m_process.state() == QProcess::NotRunning)
        return true;
    const qint64 id = m_process.processId();
    ::kill(pid_t(id), SIGCONT); // a paused server cannot act on SIGTERM
    ::kill(pid_t(id), SIGTERM);
    if (m_process.waitForFinished(kStopTimeoutMs))
        return true;
    ::kill(pid_t(id), SIGKILL);
    return m_process.waitForFinished(kStopTimeoutMs);
}

bool RedisKit::restart(QString *error)
{
    if (!stop()) {
        if (error)
            *error = QStringLiteral("redis-server %1 would not stop").arg(pid());
        return false;
    }
    QString why;
    // The same port: the clients under test must find it where it was.
    if (launch(&why))
        return true;
    if (error)
        *error = why;
    return false;
}

bool RedisKit::pause()
{
    return isRunning() && ::kill(pid_t(pid()), SIGSTOP) == 0;
}

bool RedisKit::resume()
{
    return isRunning() && ::kill(pid_t(pid()), SIGCONT) == 0;
}

bool RedisKit::isRunning() const
{
    return m_process.state() != QProcess::NotRunning;
}

bool RedisKit::flushAll()
{
    return rawCommand("FLUSHALL").startsWith("+OK");
}

QByteArray RedisKit::rawCommand(const QByteArray &line, int timeoutMs) const
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    const QDeadlineTimer deadline(timeoutMs);
    if (!socket.waitForConnected(int(deadline.remainingTime())))
        return {};
    socket.write(line + "\r\n");
    QByteArray reply;
    const auto readUntil = [&](auto done) {
        while (!done()) {
            if (deadline.hasExpired() || !socket.waitForReadyRead(int(std::max<qint64>(1, deadline.remainingTime()))))
                return false;
            reply += socket.readAll();
        }
        return true;
    };
    if (!readUntil([&] { return reply.contains("\r\n"); }))
        return {};
    const qsizetype headerEnd = reply.indexOf("\r\n");
    const qsizetype bulk = reply.startsWith('$') ? reply.mid(1, headerEnd - 1).toLongLong() : -1;
    if (bulk < 0)
        return reply.left(headerEnd);
    if (!readUntil([&] { return reply.size() >= headerEnd + 2 + bulk; }))
        return {};
    return reply.left(headerEnd + 2 + bulk);
}

QByteArray RedisKit::log() const
{
    QFile file(m_folder + QStringLiteral("/redis.log"));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace taxicore::test
