#include "PostgresKit.h"

#include "DieWithTest.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>
#include <cstdio>
#include <cstdlib>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

namespace {

constexpr auto kSystemUser = "postgres";
constexpr int kInitdbTimeoutMs = 60000;
constexpr int kPsqlTimeoutMs = 10000;
constexpr int kSocketPathMax = 90; // sun_path is 108 bytes; PostgreSQL appends ".s.PGSQL.<port>"

bool runningAsRoot()
{
    return ::geteuid() == 0;
}

// uid/gid of the postgres user, or false when there is none.
bool systemUser(uid_t *uid, gid_t *gid)
{
    const passwd *user = ::getpwnam(kSystemUser);
    if (!user)
        return false;
    *uid = user->pw_uid;
    *gid = user->pw_gid;
    return true;
}

// The child drops root before exec: initdb and postgres refuse to run as root. `deathSignal`
// (0: none) is what the child gets when the test dies (dieWithTest).
void runAsPostgresUser(QProcess &process, int deathSignal = 0)
{
    uid_t uid = 0;
    gid_t gid = 0;
    const bool dropRoot = runningAsRoot() && systemUser(&uid, &gid);
    const pid_t testPid = ::getpid();
    process.setChildProcessModifier([dropRoot, uid, gid, deathSignal, testPid] {
        if (dropRoot && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0))
            ::_exit(126);
        if (deathSignal != 0)
            taxicore::test::dieWithTest(testPid, deathSignal);
    });
}

bool chownTree(const QString &path)
{
    uid_t uid = 0;
    gid_t gid = 0;
    if (!runningAsRoot() || !systemUser(&uid, &gid))
        return true;
    QProcess chown;
    chown.start(QStringLiteral("chown"), {QStringLiteral("-R"), QStringLiteral("%1:%2").arg(uid).arg(gid), path});
    return chown.waitForFinished(10000) && chown.exitCode() == 0;
}

// Can the postgres user reach `path`? (A clone under /root, mode 700, cannot.)
bool postgresCanTraverse(const QString &path)
{
    if (!runningAsRoot())
        return true;
    QProcess probe;
    runAsPostgresUser(probe);
    probe.start(QStringLiteral("test"), {QStringLiteral("-x"), path});
    return probe.waitForFinished(5000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
}

int freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

QString buildTreeFolder()
{
    const QString bin = qEnvironmentVariableIsSet("TAXICORE_BIN_DIR") ? qEnvironmentVariable("TAXICORE_BIN_DIR")
                                                                      : QCoreApplication::applicationDirPath();
    return QDir(bin).absoluteFilePath(QStringLiteral("../test-postgres"));
}

} // namespace

PostgresKit::PostgresKit() = default;

PostgresKit::~PostgresKit()
{
    stop();
}

QString PostgresKit::binDir()
{
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("initdb"));
    if (!onPath.isEmpty())
        return QFileInfo(onPath).absolutePath();
    // Debian installs them only under /usr/lib/postgresql/<version>/bin; the newest wins.
    QDir versions(QStringLiteral("/usr/lib/postgresql"));
    const QStringList found = versions.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::Reversed);
    for (const QString &version : found) {
        const QString bin = versions.absoluteFilePath(version + QStringLiteral("/bin"));
        if (QFileInfo(bin + QStringLiteral("/initdb")).isExecutable())
            return bin;
    }
    return {};
}

// A program of the PostgreSQL installation; psql may live elsewhere than initdb (a wrapper in
// /usr/bin, the server's programs linked into /usr/local/bin).
QString PostgresKit::tool(const QString &name)
{
    const QString beside = binDir() + u'/' + name;
    if (QFileInfo(beside).isExecutable())
        return beside;
    const QString onPath = QStandardPaths::findExecutable(name);
    if (!onPath.isEmpty())
        return onPath;
    for (const QString &version :
         QDir(QStringLiteral("/usr/lib/postgresql")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString candidate = QStringLiteral("/usr/lib/postgresql/%1/bin/%2").arg(version, name);
        if (QFileInfo(candidate).isExecutable())
            return candidate;
    }
    return beside;
}

QString PostgresKit::url(const QString &database) const
{
    return QStringLiteral("postgresql://postgres@127.0.0.1:%1/%2").arg(m_port).arg(database);
}

bool PostgresKit::initialize()
{
    const QString bin = binDir();
    if (bin.isEmpty()) {
        m_error = QStringLiteral("initdb not found (apt-get install postgresql)");
        return false;
    }
    QDir().mkpath(buildTreeFolder());
    m_root = std::make_unique<QTemporaryDir>(buildTreeFolder() + QStringLiteral("/pg-XXXXXX"));
    if (!m_root->isValid() || !chownTree(m_root->path()) || !postgresCanTraverse(m_root->path())) {
        std::fprintf(stderr,
                     "PostgresKit: the postgres user cannot reach %s (a parent is not searchable, e.g. a clone "
                     "under /root); using a folder under /tmp instead\n",
                     qPrintable(buildTreeFolder()));
        m_root = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/taxicore-pg-XXXXXX"));
    }
    if (!m_root->isValid()) {
        m_error = QStringLiteral("cannot create a folder for PostgreSQL");
        return false;
    }
    m_data = m_root->filePath(QStringLiteral("data"));
    m_sockets = m_root->filePath(QStringLiteral("s"));
    m_log = m_root->filePath(QStringLiteral("postgres.log"));
    QDir().mkpath(m_sockets);
    if (m_sockets.size() > kSocketPathMax) {
        static QTemporaryDir shortSockets(QDir::tempPath() + QStringLiteral("/tcpg-XXXXXX"));
        m_sockets = shortSockets.path();
    }
    QFile(m_log).open(QIODevice::WriteOnly);
    if (!chownTree(m_root->path()) || !chownTree(m_sockets)) {
        m_error = QStringLiteral("cannot give %1 to the postgres user").arg(m_root->path());
        return false;
    }
    QProcess initdb;
    runAsPostgresUser(initdb);
    initdb.setProcessChannelMode(QProcess::MergedChannels);
    initdb.start(tool(QStringLiteral("initdb")),
                 {QStringLiteral("-D"), m_data, QStringLiteral("-U"), QStringLiteral("postgres"),
                  QStringLiteral("--auth=trust"), QStringLiteral("--locale=C"), QStringLiteral("-E"),
                  QStringLiteral("UTF8"), QStringLiteral("--no-sync")});
    if (!initdb.waitForFinished(kInitdbTimeoutMs) || initdb.exitCode() != 0) {
        m_error = QStringLiteral("initdb failed: %1").arg(QString::fromLocal8Bit(initdb.readAll()));
        return false;
    }
    if (!allowClients())
        return false;
    m_port = freeLoopbackPort();
    m_initialized = true;
    return true;
}

void PostgresKit::listenAlsoOn(const QStringList &addresses, const QString &clients)
{
    m_extraAddresses = addresses;
    m_extraClients = clients;
}

// initdb's pg_hba.conf lets in loopback only; nodes in network namespaces come from elsewhere.
bool PostgresKit::allowClients()
{
    if (m_extraClients.isEmpty())
        return true;
    QFile hba(m_data + QStringLiteral("/pg_hba.conf"));
    if (!hba.open(QIODevice::Append | QIODevice::Text)
        || hba.write(QStringLiteral("host all all %1 trust\n").arg(m_extraClients).toUtf8()) < 0) {
        m_error = QStringLiteral("cannot add %1 to %2").arg(m_extraClients, hba.fileName());
        return false;
    }
    return true;
}

bool PostgresKit::start()
{
    m_error.clear();
    if (running())
        return true;
    if (!m_initialized && !initialize())
        return false;
    const bool first = !m_server;
    m_server = std::make_unique<QProcess>();
    // SIGQUIT: PostgreSQL's immediate shutdown, which ends its backends too.
    runAsPostgresUser(*m_server, SIGQUIT);
    m_server->setStandardOutputFile(m_log, QIODevice::Append);
    m_server->setStandardErrorFile(m_log, QIODevice::Append);
    const QStringList listen = QStringList{QStringLiteral("127.0.0.1")} + m_extraAddresses;
    m_server->start(tool(QStringLiteral("postgres")),
                    {QStringLiteral("-D"), m_data, QStringLiteral("-p"), QString::number(m_port), QStringLiteral("-c"),
                     QStringLiteral("listen_addresses=") + listen.join(u','), QStringLiteral("-k"), m_sockets,
                     QStringLiteral("-c"), QStringLiteral("fsync=on"), QStringLiteral("-c"),
                     QStringLiteral("tcp_keepalives_idle=%1").arg(kKeepaliveIdleS), QStringLiteral("-c"),
                     QStringLiteral("tcp_keepalives_interval=%1").arg(kKeepaliveIntervalS), QStringLiteral("-c"),
                     QStringLiteral("tcp_keepalives_count=%1").arg(kKeepaliveCount), QStringLiteral("-c"),
                     QStringLiteral("tcp_user_timeout=%1").arg(kTcpUserTimeoutMs)});
    if (!m_server->waitForStarted(5000)) {
        m_error = QStringLiteral("postgres did not start: %1").arg(m_server->errorString());
        return false;
    }
    if (!waitUntilReady())
        return false;
    if (first && psql(QStringLiteral("CREATE DATABASE taxicore"), QStringLiteral("postgres")).isNull()
        && !m_error.isEmpty())
        return false;
    return true;
}

bool PostgresKit::waitUntilReady()
{
    const QDeadlineTimer deadline(kReadyTimeoutMs);
    while (!deadline.hasExpired()) {
        if (m_server->state() == QProcess::NotRunning) {
            m_error = QStringLiteral("postgres exited at start: %1").arg(logTail());
            return false;
        }
        if (!psql(QStringLiteral("SELECT 1"), QStringLiteral("postgres")).isEmpty())
            return true;
        QThread::msleep(100);
    }
    m_error = QStringLiteral("postgres not ready within %1 ms: %2").arg(kReadyTimeoutMs).arg(logTail());
    return false;
}

QString PostgresKit::psql(const QString &sql, const QString &database)
{
    QProcess psql;
    psql.start(tool(QStringLiteral("psql")),
               {QStringLiteral("-X"), QStringLiteral("-q"), QStringLiteral("-At"), QStringLiteral("-v"),
                QStringLiteral("ON_ERROR_STOP=1"), QStringLiteral("-h"), QStringLiteral("127.0.0.1"),
                QStringLiteral("-p"), QString::number(m_port), QStringLiteral("-U"), QStringLiteral("postgres"),
                QStringLiteral("-d"), database, QStringLiteral("-c"), sql});
    if (!psql.waitForFinished(kPsqlTimeoutMs) || psql.exitCode() != 0) {
        psql.kill();
        m_error = QStringLiteral("psql: %1").arg(QString::fromLocal8Bit(psql.readAllStandardError()).trimmed());
        return {};
    }
    m_error.clear();
    const QString out = QString::fromUtf8(psql.readAllStandardOutput()).trimmed();
    return out.isEmpty() ? QStringLiteral("") : out; // not null: a query that answered nothing
}

void PostgresKit::stop()
{
    if (!running())
        return;
    const pid_t pid = pid_t(m_server->processId());
    for (const int signal : {SIGINT, SIGQUIT, SIGKILL}) {
        ::kill(pid, signal);
        if (m_server->waitForFinished(kStopTimeoutMs))
            return;
    }
}

void PostgresKit::freeze(bool frozen)
{
    if (!running())
        return;
    const pid_t server = pid_t(m_server->processId());
    const int signal = frozen ? SIGSTOP : SIGCONT;
    ::kill(server, signal);
    // The backends and helper processes are the postmaster's children (/proc/PID/stat field 4).
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool numeric = false;
        const pid_t pid = pid_t(entry.toInt(&numeric));
        if (!numeric)
            continue;
        QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = stat.readAll();
        const QList<QByteArray> after = line.mid(line.lastIndexOf(')') + 2).split(' ');
        if (after.size() > 1 && after.at(1).toInt() == server)
            ::kill(pid, signal);
    }
}

QString PostgresKit::logTail() const
{
    QFile log(m_log);
    if (!log.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLocal8Bit(log.readAll().right(2000));
}
