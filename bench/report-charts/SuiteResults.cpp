#include "SuiteResults.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace taxicore::bench::suite {

namespace {

QString csvField(const QString &value)
{
    if (!value.contains(QLatin1Char(',')) && !value.contains(QLatin1Char('"')) && !value.contains(QLatin1Char('\n')))
        return value;
    QString quoted = value;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString number(double value, int decimals = 3)
{
    return QString::number(value, 'f', decimals);
}

// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
QStringList splitCsvLine(const QString &line)
{
    QStringList fields;
    QString current;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (quoted) {
            if (c == QLatin1Char('"')) {
                if (i + 1 < line.size() && line.at(i + 1) == QLatin1Char('"')) {
                    current += c;
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                current += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            fields << current;
            current.clear();
        } else {
            current += c;
        }
    }
    fields << current;
    return fields;
}

QStringList distinct(const QList<ResultRow> &rows, QString (*key)(const ResultRow &))
{
    QStringList values;
    for (const ResultRow &row : rows) {
        const QString value = key(row);
        if (!values.contains(value))
            values << value;
    }
    return values;
}

} // namespace

QStringList csvHeader()
{
    return {
        QStringLiteral("configuration"), QStringLiteral("kind"),           QStringLiteral("scenario"),
        QStringLiteral("stage"),         QStringLiteral("requests"),       QStringLiteral("connections"),
        QStringLiteral("completed"),     QStringLiteral("errors"),         QStringLiteral("timeouts"),
        QStringLiteral("unfinished"),    QStringLiteral("requests_per_s"), QStringLiteral("mean_ms"),
        QStringLiteral("p50_ms"),        QStringLiteral("p90_ms"),         QStringLiteral("p95_ms"),
        QStringLiteral("p99_ms"),        QStringLiteral("max_ms"),         QStringLiteral("server_cpu_us_per_request"),
        QStringLiteral("client_bound"),  QStringLiteral("primary_rss_mb"), QStringLiteral("worker_rss_max_mb"),
        QStringLiteral("workers")};
}

QString toCsv(const QList<ResultRow> &rows)
{
    QString text = csvHeader().join(QLatin1Char(',')) + QLatin1Char('\n');
    for (const ResultRow &r : rows) {
        const QStringList fields{csvField(r.configuration),
                                 csvField(r.kind),
                                 csvField(r.scenario),
                                 csvField(r.stage),
                                 csvField(r.requests),
                                 QString::number(r.connections),
                                 QString::number(r.completed),
                                 QString::number(r.errors),
                                 QString::number(r.timeouts),
                                 QString::number(r.unfinished),
                                 number(r.requestsPerSecond, 2),
                                 number(r.meanMs),
                                 number(r.p50Ms),
                                 number(r.p90Ms),
                                 number(r.p95Ms),
                                 number(r.p99Ms),
                                 number(r.maxMs),
                                 r.serverCpuUsPerRequest < 0 ? QString() : number(r.serverCpuUsPerRequest, 2),
                                 r.clientBound ? QStringLiteral("true") : QStringLiteral("false"),
                                 number(r.primaryRssMb, 1),
                                 number(r.workerRssMaxMb, 1),
                                 QString::number(r.workers)};
        text += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return text;
}

QList<ResultRow> fromCsv(const QString &text, QString &error)
{
    QList<ResultRow> rows;
    const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.isEmpty()) {
        error = QStringLiteral("empty CSV");
        return {};
    }
    const QStringList header = splitCsvLine(lines.first().trimmed());
    QMap<QString, qsizetype> column;
    for (qsizetype i = 0; i < header.size(); ++i)
        column[header.at(i)] = i;
    for (const QString &name : {QStringLiteral("configuration"), QStringLiteral("scenario"), QStringLiteral("stage"),
                                QStringLiteral("requests_per_s")}) {
        if (!column.contains(name)) {
            error = QStringLiteral("CSV has no column %1").arg(name);
            return {};
        }
    }
    for (qsizetype l = 1; l < lines.size(); ++l) {
        const QStringList f = splitCsvLine(lines.at(l).trimmed());
        auto text_ = [&](const char *name) {
            const qsizetype i = column.value(QLatin1String(name), -1);
            return i >= 0 && i < f.size() ? f.at(i) : QString();
        };
        auto real = [&](const char *name, double fallback = 0) {
            bool ok = false;
            const double v = text_(name).toDouble(&ok);
            return ok ? v : fallback;
        };
        ResultRow r;
        r.configuration = text_("configuration");
        r.kind = text_("kind");
        r.scenario = text_("scenario");
        r.stage = text_("stage");
        r.requests = text_("requests");
        r.connections = int(real("connections"));
        r.completed = qint64(real("completed"));
        r.errors = qint64(real("errors"));
        r.timeouts = qint64(real("timeouts"));
        r.unfinished = qint64(real("unfinished"));
        r.requestsPerSecond = real("requests_per_s");
        r.meanMs = real("mean_ms");
        r.p50Ms = real("p50_ms");
        r.p90Ms = real("p90_ms");
        r.p95Ms = real("p95_ms");
        r.p99Ms = real("p99_ms");
        r.maxMs = real("max_ms");
        r.serverCpuUsPerRequest = real("server_cpu_us_per_request", -1);
        r.clientBound = text_("client_bound") == QLatin1String("true");
        r.primaryRssMb = real("primary_rss_mb");
        r.workerRssMaxMb = real("worker_rss_max_mb");
        r.workers = int(real("workers"));
        rows << r;
    }
    return rows;
}

QList<double> stageCpuNs(const QString &cpuLog)
{
    QFile file(cpuLog);
    QList<double> cpu;
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return cpu;
    double start = -1;
    double last = -1;
    auto close = [&] {
        if (start >= 0)
            cpu << (last >= start ? last - start : -1);
    };
    QTextStream in(&file);
    while (!in.atEnd()) {
        const QStringList parts = in.readLine().split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (parts.size() != 2)
            continue;
        const double value = parts.at(1).toDouble();
        if (parts.at(0) == QLatin1String("stage")) {
            close();
            start = value;
            last = -1;
        } else if (parts.at(0) == QLatin1String("progress")) {
            last = value;
        }
    }
    close();
    return cpu;
}

QList<ResultRow> fromManifest(const QString &manifestPath, QStringList &warnings)
{
    QList<ResultRow> rows;
    QFile manifest(manifestPath);
    if (!manifest.open(QIODevice::ReadOnly | QIODevice::Text)) {
        warnings << QStringLiteral("cannot read %1").arg(manifestPath);
        return rows;
    }
    const QDir base = QFileInfo(manifestPath).dir().absolutePath() + QStringLiteral("/..");
    QTextStream in(&manifest);
    while (!in.atEnd()) {
        const QStringList f = in.readLine().split(QLatin1Char('\t'));
        if (f.size() < 9)
            continue;
        QFile jsonFile(base.filePath(f.at(3)));
        if (!jsonFile.open(QIODevice::ReadOnly)) {
            warnings << QStringLiteral("%1 %2: no result (taxicore-bench exit %3)").arg(f.at(0), f.at(2), f.at(8));
            continue;
        }
        const QJsonObject result = QJsonDocument::fromJson(jsonFile.readAll()).object();
        const QJsonArray stages = result.value(QLatin1String("stages")).toArray();
        if (stages.isEmpty()) {
            warnings << QStringLiteral("%1 %2: empty result").arg(f.at(0), f.at(2));
            continue;
        }
        const QList<double> cpu = stageCpuNs(base.filePath(f.at(4)));
        for (qsizetype i = 0; i < stages.size(); ++i) {
            const QJsonObject stage = stages.at(i).toObject();
            const QJsonObject summary = stage.value(QLatin1String("summary")).toObject();
            const QJsonObject latency =
                stage.value(QLatin1String("latency")).toObject().value(QLatin1String("corrected")).toObject();
            const QJsonObject errors = stage.value(QLatin1String("errors")).toObject();
            ResultRow r;
            r.configuration = f.at(0);
            r.kind = f.at(1);
            r.scenario = f.at(2);
            r.stage = stage.value(QLatin1String("name")).toString();
            r.requests = stage.value(QLatin1String("requests_description")).toString();
            r.connections =
                stage.value(QLatin1String("settings")).toObject().value(QLatin1String("connections")).toInt();
            r.completed = qint64(summary.value(QLatin1String("responses")).toDouble());
            r.errors = qint64(errors.value(QLatin1String("total")).toDouble());
            r.timeouts = qint64(errors.value(QLatin1String("timeout")).toDouble());
            r.unfinished = qint64(summary.value(QLatin1String("unfinished_at_end")).toDouble());
            r.requestsPerSecond = summary.value(QLatin1String("requests_per_s")).toDouble();
            r.meanMs = latency.value(QLatin1String("mean_ms")).toDouble();
            r.p50Ms = latency.value(QLatin1String("p50_ms")).toDouble();
            r.p90Ms = latency.value(QLatin1String("p90_ms")).toDouble();
            r.p95Ms = latency.value(QLatin1String("p95_ms")).toDouble();
            r.p99Ms = latency.value(QLatin1String("p99_ms")).toDouble();
            r.maxMs = latency.value(QLatin1String("max_ms")).toDouble();
            r.clientBound =
                stage.value(QLatin1String("client")).toObject().value(QLatin1String("client_bound")).toBool();
            const double served = double(r.completed);
            if (i < cpu.size() && cpu.at(i) >= 0 && served > 0)
                r.serverCpuUsPerRequest = cpu.at(i) / 1000.0 / served;
            r.primaryRssMb = f.at(5).toDouble() / 1024.0;
            r.workerRssMaxMb = f.at(6).toDouble() / 1024.0;
            r.workers = f.at(7).toInt();
            rows << r;
        }
    }
    return rows;
}

const ResultRow *findRow(const QList<ResultRow> &rows, const QString &configuration, const QString &scenario,
                         const QString &stage)
{
    for (const ResultRow &r : rows) {
        if (r.configuration == configuration && r.scenario == scenario && r.stage == stage)
            return &r;
    }
    return nullptr;
}

QStringList configurations(const QList<ResultRow> &rows)
{
    return distinct(rows, [](const ResultRow &r) { return r.configuration; });
}

QStringList stageKeys(const QList<ResultRow> &rows)
{
    return distinct(rows, [](const ResultRow &r) { return r.stageKey(); });
}

} // namespace taxicore::bench::suite
