// taxicore-bench-charts: the comparison suite's report writer.
//   taxicore-bench-charts --runs build/bench/runs/manifest.tsv --meta build/bench/runs/meta.txt --out build/bench
//     → results.csv, report.md, requests-per-second.png, latency.png
//   taxicore-bench-charts --csv results.csv --out DIR     → the two PNGs only
// Renders offscreen (QT_QPA_PLATFORM=offscreen is set when no platform is given).
#include "SuiteCharts.h"
#include "SuiteReport.h"
#include "SuiteResults.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QTextStream>

#include <cstdio>

using namespace taxicore::bench::suite;

namespace {

bool writeText(const QString &path, const QString &text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
        return false;
    file.write(text.toUtf8());
    return file.flush();
}

int fail(const QString &message)
{
    std::fprintf(stderr, "taxicore-bench-charts: %s\n", qPrintable(message));
    return 2;
}

} // namespace

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("taxicore-bench-charts"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Writes the comparison suite's report and PNG charts."));
    parser.addHelpOption();
    parser.addOption(
        {QStringLiteral("runs"), QStringLiteral("the suite's run manifest (TSV)"), QStringLiteral("file")});
    parser.addOption(
        {QStringLiteral("meta"), QStringLiteral("the suite's run conditions (key=value)"), QStringLiteral("file")});
    parser.addOption(
        {QStringLiteral("csv"), QStringLiteral("draw the charts from this results.csv"), QStringLiteral("file")});
    parser.addOption(
        {QStringLiteral("out"), QStringLiteral("output directory"), QStringLiteral("dir"), QStringLiteral(".")});
    parser.process(app);

    const QString outDir = parser.value(QStringLiteral("out"));
    if (!QDir().mkpath(outDir))
        return fail(QStringLiteral("cannot create %1").arg(outDir));
    QList<ResultRow> rows;
    QStringList warnings;
    QMap<QString, QString> meta;
    if (parser.isSet(QStringLiteral("runs"))) {
        rows = fromManifest(parser.value(QStringLiteral("runs")), warnings);
        meta = readMeta(parser.value(QStringLiteral("meta")));
        for (const QString &w : warnings)
            std::fprintf(stderr, "taxicore-bench-charts: warning: %s\n", qPrintable(w));
        if (!writeText(QDir(outDir).filePath(QStringLiteral("results.csv")), toCsv(rows)))
            return fail(QStringLiteral("cannot write results.csv in %1").arg(outDir));
        if (!writeText(QDir(outDir).filePath(QStringLiteral("report.md")), reportMarkdown(rows, meta, warnings)))
            return fail(QStringLiteral("cannot write report.md in %1").arg(outDir));
    } else if (parser.isSet(QStringLiteral("csv"))) {
        QFile file(parser.value(QStringLiteral("csv")));
        if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
            return fail(QStringLiteral("cannot read %1").arg(file.fileName()));
        QString error;
        rows = fromCsv(QString::fromUtf8(file.readAll()), error);
        if (!error.isEmpty())
            return fail(error);
    } else {
        return fail(QStringLiteral("give --runs MANIFEST or --csv FILE (see --help)"));
    }
    if (rows.isEmpty())
        return fail(QStringLiteral("no results to draw"));
    QString subtitle = meta.value(QStringLiteral("started_at"));
    if (meta.value(QStringLiteral("quick")) == QLatin1String("1"))
        subtitle += QStringLiteral(" (BENCH_QUICK)");
    if (subtitle.isEmpty())
        subtitle = QStringLiteral("results.csv");
    QString error;
    if (!writeCharts(rows, outDir, subtitle, error))
        return fail(error);
    return 0;
}
