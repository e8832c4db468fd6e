// PNG charts of the comparison suite, drawn with QPainter on a QImage (no display needed):
// req/s per configuration for every scenario stage (bars, one panel per stage, each with its own
// scale), and latency percentiles per configuration (lines on a log scale, one panel per stage).
#pragma once

#include "SuiteResults.h"

#include <QImage>
#include <QSize>

namespace taxicore::bench::suite {

constexpr int kChartColumns = 3;
constexpr int kPanelWidth = 440;
constexpr int kPanelHeight = 300;
constexpr int kChartHeaderHeight = 96; // title line + legend
constexpr QRgb kChartBackground = 0xffffffff;

// The image size for a chart of `panels` panels.
QSize chartSize(int panels);

QImage requestsPerSecondChart(const QList<ResultRow> &rows, const QString &title);
QImage latencyChart(const QList<ResultRow> &rows, const QString &title);

// Writes requests-per-second.png and latency.png into `directory`; false and error on failure.
bool writeCharts(const QList<ResultRow> &rows, const QString &directory, const QString &subtitle, QString &error);

} // namespace taxicore::bench::suite
