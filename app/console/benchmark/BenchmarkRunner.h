#pragma once

#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QVariantList>
#include <QVariantMap>
#include <qqmlregistration.h>

class ConsoleBackend;

// Runs `taxicore-bench --progress` as a separate process (the console stays responsive and the
// load generator's CPU is its own), follows its JSON lines, and keeps the results: one row per
// stage shaped like the seed write-ups, kept across restarts (QSettings). Each finished run is
// also recorded in the embedded server's ledger (event kind "benchmark").
class BenchmarkRunner : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(bool running READ running NOTIFY runningChanged)
    Q_PROPERTY(QString stage READ stage NOTIFY progressed)
    Q_PROPERTY(double elapsedSeconds READ elapsedSeconds NOTIFY progressed)
    Q_PROPERTY(QString error READ error NOTIFY runningChanged)
    Q_PROPERTY(QVariantList results READ results NOTIFY resultsChanged)
    Q_PROPERTY(QStringList scenarios READ scenarios CONSTANT)

public:
    static constexpr int kMaxHistory = 200;       // result rows kept across restarts
    static constexpr int kStopGraceMs = 3000;     // SIGTERM, then SIGKILL
    static constexpr int kMaxLineBytes = 4 << 20; // the result line carries histograms

    explicit BenchmarkRunner(QObject *parent = nullptr);
    ~BenchmarkRunner() override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    QString stage() const { return m_stage; }
    double elapsedSeconds() const { return m_elapsed; }
    QString error() const { return m_error; }
    QVariantList results() const { return m_results; }
    QStringList scenarios() const;

    // Against the console's own server: `path` (e.g. "/hello") or a scenario name, for
    // `durationS` seconds at `connections`; rate 0 = closed loop.
    Q_INVOKABLE bool start(const QString &pathOrScenario, int connections, double durationS, int rate = 0);
    // Any http:// URL (custom target).
    Q_INVOKABLE bool startUrl(const QString &url, const QString &scenario, int connections, double durationS,
                              int rate = 0);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void clearResults();
    Q_INVOKABLE bool exportResults(const QUrl &file) const; // .csv or .json by suffix

    // The bench binary next to the console's (build/bin or the install prefix).
    static QString benchProgram();

Q_SIGNALS:
    void backendChanged();
    void runningChanged();
    void progressed(double second, double requestsPerSecond, double p99Ms);
    void stageStarted(const QString &name);
    void resultsChanged();
    void finished(bool ok);

private:
    void readLines();
    void handleLine(const QByteArray &line);
    void addResult(const QJsonObject &result);
    // The run's summary as a "benchmark" event in the embedded server's ledger.
    void recordInLedger(const QJsonObject &result) const;
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void loadHistory();
    void saveHistory() const;

    QPointer<ConsoleBackend> m_backend;
    QProcess m_process;
    QString m_stage;
    double m_elapsed = 0;
    QString m_error;
    QString m_mode; // the server's mode when the run started
    bool m_gotResult = false;
    QVariantList m_results;
};
