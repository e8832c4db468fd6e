#include "BenchmarkRunner.h"

#include "ConsoleBackend.h"
#include "ledger/Ledger.h"
#include "report/BenchmarkEvent.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QTimer>
#include <QUrl>

namespace {
const QString kHistoryKey = QStringLiteral("benchmark/history");

// The columns of the seed write-ups' tables, in order (CSV header and row keys).
const QStringList kColumns = {
    QStringLiteral("when"),
    QStringLiteral("mode"),
    QStringLiteral("target"),
    QStringLiteral("stage"),
    QStringLiteral("concurrency"),
    QStringLiteral("completed"),
    QStringLiteral("rps"),
    QStringLiteral("meanMs"),
    QStringLiteral("p50Ms"),
    QStringLiteral("p90Ms"),
    QStringLiteral("p95Ms"),
    QStringLiteral("p99Ms"),
    QStringLiteral("maxMs"),
    QStringLiteral("errors"),
    QStringLiteral("timeouts"),
    QStringLiteral("clientBound"),
    QStringLiteral("clientBoundReason"),
};
} // namespace

BenchmarkRunner::BenchmarkRunner(QObject *parent)
    : QObject(parent)
{
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &BenchmarkRunner::readLines);
    connect(&m_process, &QProcess::finished, this, &BenchmarkRunner::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            m_error = tr("cannot run %1: %2").arg(benchProgram(), m_process.errorString());
            Q_EMIT runningChanged();
            Q_EMIT finished(false);
        }
    });
    loadHistory();
}

BenchmarkRunner::~BenchmarkRunner()
{
    if (running()) {
        m_process.kill(); // never outlive the console
        m_process.waitForFinished(kStopGraceMs);
    }
}

ConsoleBackend *BenchmarkRunner::backend() const
{
    return m_backend;
}

void BenchmarkRunner::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    Q_EMIT backendChanged();
}

QString BenchmarkRunner::benchProgram()
{
    return QCoreApplication::applicationDirPath() + QStringLiteral("/taxicore-bench");
}

QStringList BenchmarkRunner::scenarios() const
{
    return {QStringLiteral("ab-hello"),         QStringLiteral("cluster-cpu"), QStringLiteral("loadtest-fib25"),
            QStringLiteral("autocannon-fib40"), QStringLiteral("siege-taxi"),  QStringLiteral("taxi-mix")};
}

bool BenchmarkRunner::start(const QString &pathOrScenario, int connections, double durationS, int rate)
{
    if (!m_backend || !m_backend->serving()) {
        m_error = tr("the server is not running");
        Q_EMIT runningChanged();
        return false;
    }
    const QString base = m_backend->url().toString(QUrl::StripTrailingSlash);
    if (pathOrScenario.startsWith(QLatin1Char('/')))
        return startUrl(base + pathOrScenario, QString(), connections, durationS, rate);
    return startUrl(base, pathOrScenario, connections, durationS, rate);
}

bool BenchmarkRunner::startUrl(const QString &url, const QString &scenario, int connections, double durationS, int rate)
{
    if (running())
        return false;
    QStringList args{url, QStringLiteral("--progress")};
    if (!scenario.isEmpty())
        args << QStringLiteral("--scenario") << scenario;
    if (connections > 0)
        args << QStringLiteral("-c") << QString::number(connections);
    if (durationS > 0)
        args << QStringLiteral("-d") << QString::number(durationS);
    if (rate > 0)
        args << QStringLiteral("--rate") << QString::number(rate);

    m_error.clear();
    m_stage.clear();
    m_elapsed = 0;
    m_gotResult = false;
    m_mode = m_backend ? m_backend->mode() : QString();
    // The taxi scenarios report car positions: they carry the server's device token, passed in
    // the environment so it never shows in `ps`.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (m_backend && !m_backend->deviceToken().isEmpty())
        environment.insert(QStringLiteral("TAXICORE_DEVICE_TOKEN"), m_backend->deviceToken());
    m_process.setProcessEnvironment(environment);
    m_process.start(benchProgram(), args);
    Q_EMIT runningChanged();
    return true;
}

void BenchmarkRunner::stop()
{
    if (!running())
        return;
    m_process.terminate(); // the bench still reports what it measured
    QTimer::singleShot(kStopGraceMs, this, [this] {
        if (running())
            m_process.kill();
    });
}

void BenchmarkRunner::readLines()
{
    while (m_process.canReadLine())
        handleLine(m_process.readLine(kMaxLineBytes).trimmed());
}

void BenchmarkRunner::handleLine(const QByteArray &line)
{
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    const QString type = o.value(QLatin1String("type")).toString();
    if (type == QLatin1String("stage")) {
        m_stage = o.value(QLatin1String("name")).toString();
        Q_EMIT stageStarted(m_stage);
    } else if (type == QLatin1String("progress")) {
        m_elapsed = o.value(QLatin1String("elapsed_s")).toDouble(); // within the stage
        Q_EMIT progressed(o.value(QLatin1String("second")).toDouble(),
                          o.value(QLatin1String("requests_per_s")).toDouble(),
                          o.value(QLatin1String("p99_ms")).toDouble());
    } else if (type == QLatin1String("result")) {
        m_gotResult = true;
        addResult(o);
        recordInLedger(o);
    }
}

void BenchmarkRunner::addResult(const QJsonObject &result)
{
    const QString when = QDateTime::currentDateTime().toString(Qt::ISODate);
    const QJsonArray stages = result.value(QLatin1String("stages")).toArray();
    for (const auto &stageValue : stages) {
        const QJsonObject stage = stageValue.toObject();
        const QJsonObject summary = stage.value(QLatin1String("summary")).toObject();
        const QJsonObject latency =
            stage.value(QLatin1String("latency")).toObject().value(QLatin1String("corrected")).toObject();
        const QJsonObject errors = stage.value(QLatin1String("errors")).toObject();
        const QJsonObject client = stage.value(QLatin1String("client")).toObject();
        const QJsonObject settings = stage.value(QLatin1String("settings")).toObject();
        const QVariantMap row{
            {QStringLiteral("when"), when},
            {QStringLiteral("mode"), m_mode},
            {QStringLiteral("target"), stage.value(QLatin1String("requests_description")).toString()},
            {QStringLiteral("stage"), stage.value(QLatin1String("name")).toString()},
            {QStringLiteral("concurrency"), settings.value(QLatin1String("connections")).toInt()},
            {QStringLiteral("completed"), summary.value(QLatin1String("responses")).toDouble()},
            {QStringLiteral("rps"), summary.value(QLatin1String("requests_per_s")).toDouble()},
            {QStringLiteral("meanMs"), latency.value(QLatin1String("mean_ms")).toDouble()},
            {QStringLiteral("p50Ms"), latency.value(QLatin1String("p50_ms")).toDouble()},
            {QStringLiteral("p90Ms"), latency.value(QLatin1String("p90_ms")).toDouble()},
            {QStringLiteral("p95Ms"), latency.value(QLatin1String("p95_ms")).toDouble()},
            {QStringLiteral("p99Ms"), latency.value(QLatin1String("p99_ms")).toDouble()},
            {QStringLiteral("maxMs"), latency.value(QLatin1String("max_ms")).toDouble()},
            {QStringLiteral("errors"), errors.value(QLatin1String("total")).toDouble()},
            {QStringLiteral("timeouts"), errors.value(QLatin1String("timeout")).toDouble()},
            {QStringLiteral("clientBound"), client.value(QLatin1String("client_bound")).toBool()},
            {QStringLiteral("clientBoundReason"), client.value(QLatin1String("client_bound_reason")).toString()},
        };
        m_results.prepend(row); // newest first
    }
    while (m_results.size() > kMaxHistory)
        m_results.removeLast();
    saveHistory();
    Q_EMIT resultsChanged();
}

void BenchmarkRunner::recordInLedger(const QJsonObject &result) const
{
    taxicore::Ledger *ledger = m_backend ? m_backend->ledger() : nullptr;
    if (!ledger)
        return;
    // Fire and forget: the ledger's writer commits it with the next batch; the Reports view lists it.
    ledger->append(taxicore::EventRecord{QStringLiteral("benchmark"),
                                         taxicore::bench::benchmarkEventDetail(result, m_mode),
                                         QDateTime::currentMSecsSinceEpoch()});
}

void BenchmarkRunner::onFinished(int exitCode, QProcess::ExitStatus status)
{
    readLines();
    const QString stderrText = QString::fromUtf8(m_process.readAllStandardError()).trimmed();
    if (!m_gotResult) {
        m_error = status == QProcess::CrashExit ? tr("taxicore-bench crashed")
                                                : (stderrText.section(QLatin1Char('\n'), -1).isEmpty()
                                                       ? tr("taxicore-bench exited with %1").arg(exitCode)
                                                       : stderrText.section(QLatin1Char('\n'), -1));
    }
    Q_EMIT runningChanged();
    Q_EMIT finished(m_gotResult);
}

void BenchmarkRunner::clearResults()
{
    m_results.clear();
    saveHistory();
    Q_EMIT resultsChanged();
}

bool BenchmarkRunner::exportResults(const QUrl &fileUrl) const
{
    const QString path = fileUrl.isLocalFile() ? fileUrl.toLocalFile() : fileUrl.toString();
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    if (QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0) {
        file.write(kColumns.join(QLatin1Char(',')).toUtf8() + '\n');
        for (const auto &rowValue : m_results) {
            const QVariantMap row = rowValue.toMap();
            QStringList cells;
            for (const auto &column : kColumns) {
                QString cell = row.value(column).toString();
                if (cell.contains(QLatin1Char(',')) || cell.contains(QLatin1Char('"')))
                    cell = QLatin1Char('"') + cell.replace(QLatin1Char('"'), QLatin1String("\"\"")) + QLatin1Char('"');
                cells << cell;
            }
            file.write(cells.join(QLatin1Char(',')).toUtf8() + '\n');
        }
    } else {
        file.write(QJsonDocument(QJsonArray::fromVariantList(m_results)).toJson());
    }
    return file.error() == QFileDevice::NoError;
}

void BenchmarkRunner::loadHistory()
{
    const QByteArray json = QSettings().value(kHistoryKey).toByteArray();
    m_results = QJsonDocument::fromJson(json).array().toVariantList();
}

void BenchmarkRunner::saveHistory() const
{
    QSettings().setValue(kHistoryKey,
                         QJsonDocument(QJsonArray::fromVariantList(m_results)).toJson(QJsonDocument::Compact));
}
