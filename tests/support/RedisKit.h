#pragma once

// A private redis-server for one test: a free loopback port, its folder in the build tree, no
// persistence, in the foreground as our child (SIGKILLed with us if the test dies). It can be
// stopped (SIGTERM by pid, SIGKILL after a timeout), restarted on the same port, paused
// (SIGSTOP: a stuck server), flushed; the destructor stops it.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace taxicore::test {

class RedisKit {
public:
    // Until redis-server answers PING after a start.
    static constexpr int kStartTimeoutMs = 10000;
    // SIGTERM lets Redis close its clients; if it has not exited by then, SIGKILL.
    static constexpr int kStopTimeoutMs = 3000;

    // $TAXICORE_REDIS_SERVER (set by tests/redis/CMakeLists.txt), else redis-server on PATH or
    // /usr/bin; empty when there is none.
    static QString program();

    RedisKit() = default;
    ~RedisKit();
    RedisKit(const RedisKit &) = delete;
    RedisKit &operator=(const RedisKit &) = delete;

    // Starts on a free port (extra redis-server arguments, e.g. {"--requirepass", "x"}); false
    // with the reason in `error` when it does not answer PING within kStartTimeoutMs.
    bool start(QStringList extraArgs = {}, QString *error = nullptr);
    // Stops it (SIGTERM, then SIGKILL after kStopTimeoutMs); true once the process is gone.
    bool stop();
    // Stops and starts again on the same port with the same arguments.
    bool restart(QString *error = nullptr);
    bool pause();  // SIGSTOP: the server holds its connections and answers nothing
    bool resume(); // SIGCONT
    bool isRunning() const;
    // FLUSHALL; true on +OK.
    bool flushAll();
    // Sends one command (inline form, e.g. "PING") on a fresh connection and returns the first
    // reply line ("+PONG"; a bulk string with its body: "$5\r\nhello"), or an empty array after `timeoutMs`.
    QByteArray rawCommand(const QByteArray &line, int timeoutMs = 1000) const;

    int port() const { return m_port; }
    qint64 pid() const { return m_process.processId(); }
    QString url() const { return QStringLiteral("redis://127.0.0.1:%1").arg(m_port); }
    QString folder() const { return m_folder; }
    // The server's log (its stdout), for failure messages.
    QByteArray log() const;

private:
    bool launch(QString *error);
    bool waitForPing(int timeoutMs);

    QProcess m_process;
    int m_port = 0;
    QString m_folder;
    QStringList m_extraArgs;
};

} // namespace taxicore::test
