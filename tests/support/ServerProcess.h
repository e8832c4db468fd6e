#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QUrl>
#include <functional>

namespace taxicore::test {

// One `taxicore-server --port 0 [args]` child process. start() waits (bounded) for the first
// stdout line `listening on http://HOST:PORT`; stop() sends SIGTERM to its pid, waits, then
// SIGKILLs. The destructor always stops it.
class ServerProcess {
public:
    explicit ServerProcess(QStringList extraArgs = {});
    ~ServerProcess();
    ServerProcess(const ServerProcess &) = delete;
    ServerProcess &operator=(const ServerProcess &) = delete;

    // The directory holding taxicore-server: $TAXICORE_BIN_DIR, else the build's bin/.
    static QString binDir();
    static QString binary();

    // Starts the server and reads its first stdout line (at most `timeoutMs`).
    bool start(int timeoutMs = 10'000);
    // Variables set (or overridden) in the server's environment from the next start() on.
    void setEnvironment(const QStringList &nameEqualsValue);
    // Runs in the child before exec from the next start() on (e.g. setpgid for a process group).
    void setChildModifier(const std::function<void()> &modifier) { m_childModifier = modifier; }
    // SIGTERM, wait up to `graceMs`, then SIGKILL. Returns the exit code, or -1 when it had to be
    // killed or was not running.
    int stop(int graceMs = 10'000);
    // Sends SIGTERM without waiting.
    bool terminate();
    // Waits for the process to end by itself; true when it did within `timeoutMs`.
    bool waitForExit(int timeoutMs);
    bool isRunning() const;

    QString error() const { return m_error; }
    QByteArray firstLine() const { return m_firstLine; }
    QString host() const { return m_host; }
    quint16 port() const { return m_port; }
    QUrl url() const { return m_url; }
    qint64 pid() const { return m_pid; }
    int exitCode() const;
    QProcess::ExitStatus exitStatus() const;
    // Everything the server wrote to stderr so far (for failure messages; at most the last 8 KiB).
    QByteArray stderrText();

    struct RunResult {
        bool finished = false;
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };
    // Runs taxicore-server with `args` to completion (one-shot: --version, bad flags).
    // `childModifier` runs in the child before exec (e.g. to drop to another user).
    static RunResult run(const QStringList &args, int timeoutMs = 10'000,
                         const std::function<void()> &childModifier = {});

private:
    QStringList m_args;
    QProcess m_process;
    std::function<void()> m_childModifier; // a test's, run in the child before exec
    // stderr goes to a file, so a chatty server never blocks on a full pipe while a test waits
    // on sockets without running an event loop.
    QTemporaryDir m_logDir;
    QString m_error;
    QByteArray m_firstLine;
    QString m_host;
    quint16 m_port = 0;
    QUrl m_url;
    qint64 m_pid = 0;
};

} // namespace taxicore::test
