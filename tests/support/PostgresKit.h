#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <memory>

// A private PostgreSQL for one test: initdb into a folder of the build tree, `postgres` on a free
// loopback port with fsync on, a database "taxicore". Runs as the `postgres` system user when the
// test runs as root (PostgreSQL refuses root). Can be stopped and started again on the same port
// and data (the "PostgreSQL down" tests); always stopped in the destructor.
//
//   PostgresKit pg;
//   TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb) is not installed");
//   QVERIFY2(pg.start(), qPrintable(pg.error()));
//   options.url = pg.url();
class PostgresKit {
public:
    static constexpr int kReadyTimeoutMs = 20000; // initdb + start; ~1-2 s on this machine
    static constexpr int kStopTimeoutMs = 10000;  // fast shutdown, then immediate, then SIGKILL
    // How soon the server drops a silent client (a partition: no FIN, no RST), so the cluster's
    // leader lock moves within seconds; the values server/cluster/LeaderLease.h requires (its
    // ordering argument) and docs/cluster.md "Partitions" asks operators to set.
    static constexpr int kKeepaliveIdleS = 5;
    static constexpr int kKeepaliveIntervalS = 1;
    static constexpr int kKeepaliveCount = 3;
    static constexpr int kTcpUserTimeoutMs = 6000;

    PostgresKit();
    ~PostgresKit();
    PostgresKit(const PostgresKit &) = delete;
    PostgresKit &operator=(const PostgresKit &) = delete;

    // Where initdb and postgres are: PATH, else /usr/lib/postgresql/<newest>/bin; empty: none.
    static QString binDir();
    static QString tool(const QString &name);

    // First call: initdb, start, create the database. Later calls: start again on the same port
    // and data. False with error() on failure (the server log's tail included).
    bool start();
    // Before the first start(): listen on these addresses too (besides 127.0.0.1) and let clients
    // from `clients` (a CIDR) in, trusted like loopback: nodes in network namespaces.
    void listenAlsoOn(const QStringList &addresses, const QString &clients);
    // SIGINT (fast shutdown: connected clients are disconnected) by PID, SIGQUIT then SIGKILL
    // after kStopTimeoutMs. (SIGTERM is PostgreSQL's smart shutdown: it waits for every client.)
    void stop();
    bool running() const { return m_server && m_server->state() != QProcess::NotRunning; }
    // SIGSTOP (true) or SIGCONT (false) to the server and every backend: a database that hangs
    // without refusing or closing anything (a stuck disk, a frozen VM), unlike stop().
    void freeze(bool frozen);

    int port() const { return m_port; }
    qint64 pid() const { return m_server ? m_server->processId() : 0; }
    // The folder of its data, log and sockets (removed by the destructor).
    QString folder() const { return m_root ? m_root->path() : QString(); }
    QString url(const QString &database = QStringLiteral("taxicore")) const;
    // psql -Atc: the rows as text (fields separated by '|'), or empty with error() set.
    QString psql(const QString &sql, const QString &database = QStringLiteral("taxicore"));
    const QString &error() const { return m_error; }

private:
    bool initialize();
    bool waitUntilReady();
    QString logTail() const;
    bool allowClients();

    std::unique_ptr<QTemporaryDir> m_root;
    QString m_data;
    QString m_sockets;
    QString m_log;
    int m_port = 0;
    bool m_initialized = false;
    QStringList m_extraAddresses;
    QString m_extraClients;
    std::unique_ptr<QProcess> m_server;
    QString m_error;
};
