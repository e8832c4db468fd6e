#include "NetnsKit.h"

#include "DieWithTest.h"
#include "ServerProcess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QStandardPaths>
#include <cerrno>
#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace taxicore::test {

namespace {

const QString kNamespacePrefix = QStringLiteral("taxicore-part-");
const QString kLinkPrefix = QStringLiteral("txp");
const QString kCommentPrefix = QStringLiteral("taxicore-partition-");

bool processAlive(qint64 pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno != ESRCH);
}

QString runQuietly(const QString &program, const QStringList &args, bool *ok = nullptr)
{
    QProcess process;
    process.start(program, args);
    const bool finished = process.waitForFinished(NetnsLab::kCommandTimeoutMs);
    if (!finished)
        process.kill();
    const bool good = finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    if (ok)
        *ok = good;
    return good ? QString::fromUtf8(process.readAllStandardOutput())
                : QString::fromUtf8(process.readAllStandardError()).trimmed();
}

// `iptables -S INPUT` of this namespace: the rules of runs whose process is gone, as -D arguments.
// (Rules inside a namespace go with it.)
QList<QStringList> deadRunRules()
{
    bool ok = false;
    const QString rules = runQuietly(QStringLiteral("iptables"), {QStringLiteral("-S"), QStringLiteral("INPUT")}, &ok);
    QList<QStringList> out;
    if (!ok)
        return out;
    static const QRegularExpression ours(QStringLiteral("--comment \"?") + kCommentPrefix + QStringLiteral("(\\d+)"));
    for (const QString &line : rules.split(u'\n', Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch match = ours.match(line);
        if (!line.startsWith(QStringLiteral("-A ")) || !match.hasMatch()
            || processAlive(match.captured(1).toLongLong()))
            continue;
        QStringList args = line.split(u' ', Qt::SkipEmptyParts);
        args[0] = QStringLiteral("-D");
        for (QString &arg : args)
            arg.remove(u'"');
        out << args;
    }
    return out;
}

// Deletes one rule until none is left like it (a failed cut may have added it once or not at all).
void deleteAll(const QString &program, const QStringList &args)
{
    constexpr int kMaxCopies = 10;
    bool ok = true;
    for (int i = 0; i < kMaxCopies && ok; ++i)
        runQuietly(program, args, &ok);
}

} // namespace

bool NetnsLab::haveTool(const QString &name)
{
    return !QStandardPaths::findExecutable(name).isEmpty()
           || !QStandardPaths::findExecutable(name, {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin")}).isEmpty();
}

QString NetnsLab::unavailable()
{
    if (::geteuid() != 0)
        return QStringLiteral("needs root (network namespaces, veth pairs and iptables rules)");
    if (!haveTool(QStringLiteral("ip")))
        return QStringLiteral("`ip` is not installed (package iproute2)");
    if (!haveTool(QStringLiteral("iptables")))
        return QStringLiteral("`iptables` is not installed (package iptables)");
    const QString probe = kNamespacePrefix + QString::number(::getpid()) + QStringLiteral("-probe");
    bool ok = false;
    const QString said = runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("add"), probe}, &ok);
    if (!ok)
        return QStringLiteral("`ip netns add` fails here: %1").arg(said);
    const QString filter = runQuietly(
        QStringLiteral("ip"),
        {QStringLiteral("netns"), QStringLiteral("exec"), probe, QStringLiteral("iptables"), QStringLiteral("-S")},
        &ok);
    runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("del"), probe});
    if (!ok)
        return QStringLiteral("iptables does not work in a network namespace here: %1").arg(filter);
    return {};
}

// A run killed before its destructor left namespaces, veths and rules named after its PID.
void NetnsLab::sweepDeadRuns()
{
    static const QRegularExpression nsName(QStringLiteral("^") + kNamespacePrefix + QStringLiteral("(\\d+)-\\S+"));
    for (const QString &line : runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("list")})
                                   .split(u'\n', Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch match = nsName.match(line);
        if (!match.hasMatch() || processAlive(match.captured(1).toLongLong()))
            continue;
        const QString ns = match.captured(0);
        // Servers a dead run started there died with it (PR_SET_PDEATHSIG); anything left goes.
        for (const QString &pid :
             runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("pids"), ns})
                 .split(u'\n', Qt::SkipEmptyParts))
            ::kill(pid_t(pid.toLongLong()), SIGKILL);
        runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("del"), ns});
    }
    static const QRegularExpression linkName(QStringLiteral("^\\d+: (") + kLinkPrefix
                                             + QStringLiteral("(\\d+)r\\d+)[@:]"));
    for (const QString &line :
         runQuietly(QStringLiteral("ip"), {QStringLiteral("-o"), QStringLiteral("link"), QStringLiteral("show")})
             .split(u'\n', Qt::SkipEmptyParts)) {
        const QRegularExpressionMatch match = linkName.match(line);
        if (match.hasMatch() && !processAlive(match.captured(2).toLongLong()))
            runQuietly(QStringLiteral("ip"), {QStringLiteral("link"), QStringLiteral("del"), match.captured(1)});
    }
    for (const QStringList &rule : deadRunRules())
        runQuietly(QStringLiteral("iptables"), rule);
}

NetnsLab::NetnsLab()
    : m_tag(QString::number(::getpid()))
{
    sweepDeadRuns();
}

NetnsLab::~NetnsLab()
{
    tearDown();
}

QString NetnsLab::run(const QString &program, const QStringList &args)
{
    bool ok = false;
    const QString out = runQuietly(program, args, &ok);
    if (ok)
        return out.isNull() ? QStringLiteral("") : out;
    m_error = QStringLiteral("%1 %2: %3").arg(program, args.join(u' '), out);
    return {};
}

bool NetnsLab::addHosts(int count)
{
    if (m_subnet == 0) {
        // A /24 of 169.254/16 no interface here uses yet (another run's, a real link-local's).
        const QString used = run(QStringLiteral("ip"), {QStringLiteral("-4"), QStringLiteral("-o"),
                                                        QStringLiteral("addr"), QStringLiteral("show")});
        if (used.isNull())
            return false;
        for (int step = 0; step < 200 && m_subnet == 0; ++step) {
            const int candidate = 20 + int((::getpid() + step) % 200);
            if (candidate != 169 && !used.contains(QStringLiteral(" 169.254.%1.").arg(candidate)))
                m_subnet = candidate;
        }
        if (m_subnet == 0) {
            m_error = QStringLiteral("no free /24 in 169.254.0.0/16");
            return false;
        }
    }
    for (int n = 0; n < count; ++n) {
        const int i = hostCount();
        if (i >= 60) {
            m_error = QStringLiteral("at most 60 hosts");
            return false;
        }
        Host host{kNamespacePrefix + m_tag + u'-' + QString::number(i), kLinkPrefix + m_tag + u'r' + QString::number(i),
                  kLinkPrefix + m_tag + u'n' + QString::number(i),
                  QStringLiteral("169.254.%1.%2").arg(m_subnet).arg(4 * i + 1),
                  QStringLiteral("169.254.%1.%2").arg(m_subnet).arg(4 * i + 2)};
        const QStringList inNs{QStringLiteral("netns"), QStringLiteral("exec"), host.ns, QStringLiteral("ip")};
        m_hosts.push_back(host); // from here on tearDown() removes it, whatever fails below
        const QString ip = QStringLiteral("ip");
        if (run(ip, {QStringLiteral("netns"), QStringLiteral("add"), host.ns}).isNull()
            || run(ip, {QStringLiteral("link"), QStringLiteral("add"), host.rootLink, QStringLiteral("type"),
                        QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"), host.hostLink,
                        QStringLiteral("netns"), host.ns})
                   .isNull()
            || run(ip, {QStringLiteral("addr"), QStringLiteral("add"), host.rootAddress + QStringLiteral("/30"),
                        QStringLiteral("dev"), host.rootLink})
                   .isNull()
            || run(ip, {QStringLiteral("link"), QStringLiteral("set"), host.rootLink, QStringLiteral("up")}).isNull()
            || run(ip, inNs
                           + QStringList{QStringLiteral("link"), QStringLiteral("set"), QStringLiteral("lo"),
                                         QStringLiteral("up")})
                   .isNull()
            || run(ip, inNs
                           + QStringList{QStringLiteral("addr"), QStringLiteral("add"),
                                         host.address + QStringLiteral("/30"), QStringLiteral("dev"), host.hostLink})
                   .isNull()
            || run(ip, inNs
                           + QStringList{QStringLiteral("link"), QStringLiteral("set"), host.hostLink,
                                         QStringLiteral("up")})
                   .isNull())
            return false;
    }
    return true;
}

QStringList NetnsLab::rootAddresses() const
{
    QStringList out;
    for (const Host &host : m_hosts)
        out << host.rootAddress;
    return out;
}

QString NetnsLab::hostsCidr() const
{
    return QStringLiteral("169.254.%1.0/24").arg(m_subnet);
}

// This side: what arrives on the host's veth for `port`. The host's side: what comes from `port`.
QStringList NetnsLab::ruleSpec(int i, int port, bool inHost) const
{
    const Host &h = host(i);
    QStringList spec{QStringLiteral("INPUT")};
    if (inHost)
        spec << QStringLiteral("-i") << h.hostLink << QStringLiteral("-s") << h.rootAddress << QStringLiteral("-p")
             << QStringLiteral("tcp") << QStringLiteral("--sport");
    else
        spec << QStringLiteral("-i") << h.rootLink << QStringLiteral("-p") << QStringLiteral("tcp")
             << QStringLiteral("--dport");
    spec << QString::number(port) << QStringLiteral("-m") << QStringLiteral("comment") << QStringLiteral("--comment")
         << kCommentPrefix + m_tag << QStringLiteral("-j") << QStringLiteral("DROP");
    return spec;
}

bool NetnsLab::cut(int i, int port)
{
    const QStringList inHost{QStringLiteral("netns"), QStringLiteral("exec"), host(i).ns, QStringLiteral("iptables")};
    m_cuts.emplace_back(i, port); // heal() removes what was added, whatever fails below
    // -I: first in the chain, before any ACCEPT of established connections.
    return !run(QStringLiteral("iptables"), QStringList{QStringLiteral("-I")} + ruleSpec(i, port, false)).isNull()
           && !run(QStringLiteral("ip"), inHost + QStringList{QStringLiteral("-I")} + ruleSpec(i, port, true)).isNull();
}

bool NetnsLab::heal(int i, int port)
{
    bool found = false;
    for (auto it = m_cuts.begin(); it != m_cuts.end();) {
        if (*it != std::pair{i, port}) {
            ++it;
            continue;
        }
        it = m_cuts.erase(it);
        found = true;
    }
    const QStringList inHost{QStringLiteral("netns"), QStringLiteral("exec"), host(i).ns, QStringLiteral("iptables")};
    deleteAll(QStringLiteral("iptables"), QStringList{QStringLiteral("-D")} + ruleSpec(i, port, false));
    deleteAll(QStringLiteral("ip"), inHost + QStringList{QStringLiteral("-D")} + ruleSpec(i, port, true));
    if (!found)
        m_error = QStringLiteral("host %1 was not cut from port %2").arg(i).arg(port);
    return found;
}

void NetnsLab::tearDown()
{
    while (!m_cuts.empty())
        heal(m_cuts.back().first, m_cuts.back().second);
    for (const Host &host : m_hosts) {
        for (const QString &pid :
             runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("pids"), host.ns})
                 .split(u'\n', Qt::SkipEmptyParts))
            ::kill(pid_t(pid.toLongLong()), SIGKILL);
        runQuietly(QStringLiteral("ip"),
                   {QStringLiteral("link"), QStringLiteral("del"), host.rootLink}); // both ends go
        runQuietly(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("del"), host.ns});
    }
    m_hosts.clear();
}

NamespacedServer::NamespacedServer(QString ns, QString address, QStringList args)
    : m_ns(std::move(ns))
    , m_address(std::move(address))
    , m_args(std::move(args))
{
    if (m_folder.isValid())
        m_process.setStandardErrorFile(m_folder.filePath(QStringLiteral("stderr.log")));
}

NamespacedServer::~NamespacedServer()
{
    stop();
}

bool NamespacedServer::start(int timeoutMs)
{
    m_error.clear();
    QStringList args{QStringLiteral("netns"),
                     QStringLiteral("exec"),
                     m_ns,
                     ServerProcess::binary(),
                     QStringLiteral("--host"),
                     m_address,
                     QStringLiteral("--port"),
                     QStringLiteral("0"),
                     QStringLiteral("--data-dir"),
                     m_folder.filePath(QStringLiteral("data"))};
    args += m_args;
    m_process.setChildProcessModifier([testPid = ::getpid()] { dieWithTest(testPid, SIGKILL); });
    m_process.start(QStringLiteral("ip"), args);
    if (!m_process.waitForStarted(timeoutMs)) {
        m_error = QStringLiteral("cannot start ip netns exec: %1").arg(m_process.errorString());
        return false;
    }
    m_pid = m_process.processId();
    const QDeadlineTimer deadline(timeoutMs);
    while (!m_process.canReadLine()) {
        if (deadline.hasExpired() || m_process.state() != QProcess::Running) {
            m_error = QStringLiteral("no `listening on` line within %1 ms; log: %2")
                          .arg(timeoutMs)
                          .arg(QString::fromUtf8(log()));
            stop(1000);
            return false;
        }
        m_process.waitForReadyRead(100);
    }
    const QString line = QString::fromUtf8(m_process.readLine()).trimmed();
    static const QRegularExpression pattern(QStringLiteral("^listening on http://([^:/]+):(\\d+)$"));
    const QRegularExpressionMatch match = pattern.match(line);
    if (!match.hasMatch()) {
        m_error = QStringLiteral("unexpected first line: \"%1\"").arg(line);
        stop(1000);
        return false;
    }
    m_port = quint16(match.captured(2).toUInt());
    return true;
}

int NamespacedServer::stop(int graceMs)
{
    if (!isRunning())
        return -1;
    ::kill(pid_t(m_pid), SIGTERM);
    if (m_process.waitForFinished(graceMs))
        return m_process.exitCode();
    ::kill(pid_t(m_pid), SIGKILL);
    m_process.waitForFinished(5000);
    return -1;
}

QByteArray NamespacedServer::log() const
{
    QFile file(m_folder.filePath(QStringLiteral("stderr.log")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().right(8192);
}

} // namespace taxicore::test
