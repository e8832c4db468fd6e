#pragma once

// Hosts of a test network on this machine: network namespaces, each joined to this one by a veth
// pair with a /30 of 169.254.A.0/24 (link-local: never routed off the machine), and partitions
// made with iptables DROP rules on those veths. For tests that cut a cluster node off from
// PostgreSQL or Redis (tests/cluster/cluster_partition_test.cpp). Needs root, `ip` and `iptables`.
//
// Everything it makes carries this process's PID: namespaces `taxicore-part-PID-I`, veths
// `txpPIDrI` (this side) and `txpPIDnI` (in the namespace), rules commented
// `taxicore-partition-PID`; the destructor removes them all, and a new lab first removes what a
// run that died (SIGKILL, a ctest timeout) left behind, so nothing else is ever touched.
//
//   NetnsLab lab;
//   QVERIFY2(lab.addHosts(3), qPrintable(lab.error()));
//   lab.cut(0, pgPort);      // host 0 and this namespace's port pgPort no longer hear each other
//   lab.heal(0, pgPort);

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <vector>

namespace taxicore::test {

class NetnsLab {
public:
    static constexpr int kCommandTimeoutMs = 10'000; // one `ip` or `iptables` run

    struct Host {
        QString ns;          // taxicore-part-PID-I
        QString rootLink;    // txpPIDrI, in this namespace
        QString hostLink;    // txpPIDnI, in the host's
        QString rootAddress; // 169.254.A.(4I+1): where the host reaches this namespace's services
        QString address;     // 169.254.A.(4I+2): the host's own
    };

    // Why this machine cannot run such a test (not root, no `ip`, no `iptables`, namespaces
    // refused), or empty.
    static QString unavailable();
    static bool haveTool(const QString &name);

    NetnsLab();
    ~NetnsLab();
    NetnsLab(const NetnsLab &) = delete;
    NetnsLab &operator=(const NetnsLab &) = delete;

    // `count` more hosts; false with error().
    bool addHosts(int count);
    const Host &host(int i) const { return m_hosts.at(std::size_t(i)); }
    int hostCount() const { return int(m_hosts.size()); }
    // Every address of this namespace's ends (for a server's listen list), and the hosts' range.
    QStringList rootAddresses() const;
    QString hostsCidr() const;

    // Host `i` and TCP port `port` of this namespace stop hearing each other, silently: a DROP of
    // what arrives on this side's veth for the port, and one in the host's namespace of what
    // comes from it. Both in INPUT, so neither end's sends fail (a DROP in OUTPUT answers EPERM at
    // once, which no real partition does). heal() removes both.
    bool cut(int i, int port);
    bool heal(int i, int port);
    // Removes every rule, veth and namespace (the destructor does).
    void tearDown();
    const QString &error() const { return m_error; }

    // Runs a program to its end; its stdout, or a null string with error() set.
    QString run(const QString &program, const QStringList &args);

private:
    static void sweepDeadRuns();
    QStringList ruleSpec(int i, int port, bool inHost) const;

    QString m_tag;
    int m_subnet = 0; // A of 169.254.A.0/24
    std::vector<Host> m_hosts;
    std::vector<std::pair<int, int>> m_cuts; // (host, port) while cut
    QString m_error;
};

// taxicore-server run inside a host's namespace (`ip netns exec NS taxicore-server --host ADDRESS
// --port 0 ARGS`; `ip netns exec` execs, so the process is the server itself): start() waits for
// its `listening on` line; stop() is SIGTERM by PID, then SIGKILL. If the test dies, the kernel
// kills it (PR_SET_PDEATHSIG).
class NamespacedServer {
public:
    NamespacedServer(QString ns, QString address, QStringList args);
    ~NamespacedServer();
    NamespacedServer(const NamespacedServer &) = delete;
    NamespacedServer &operator=(const NamespacedServer &) = delete;

    bool start(int timeoutMs);
    int stop(int graceMs = 10'000);
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }

    const QString &host() const { return m_address; }
    quint16 port() const { return m_port; }
    qint64 pid() const { return m_pid; }
    const QString &error() const { return m_error; }
    // The server's stderr (its log), the last 8 KiB.
    QByteArray log() const;

private:
    QString m_ns;
    QString m_address;
    QStringList m_args;
    QProcess m_process;
    QTemporaryDir m_folder;
    quint16 m_port = 0;
    qint64 m_pid = 0;
    QString m_error;
};

} // namespace taxicore::test
