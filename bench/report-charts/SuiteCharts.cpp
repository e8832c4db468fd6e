#include "SuiteCharts.h"

#include <QDir>
#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace taxicore::bench::suite {

namespace {

const QColor kAxis(0x44, 0x44, 0x44);
const QColor kGrid(0xdd, 0xdd, 0xdd);
const QColor kText(0x22, 0x22, 0x22);

QColor configurationColor(int index)
{
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                     QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
                                     QColor(0x17, 0xbe, 0xcf)};
    return palette[index % int(std::size(palette))];
}

QFont font(int pixelSize, bool bold = false)
{
    QFont f(QStringLiteral("DejaVu Sans"));
    f.setPixelSize(pixelSize);
    f.setBold(bold);
    return f;
}

// 1, 2, 2.5, 5 × 10^k steps giving about `target` intervals up to `maximum`.
double niceStep(double maximum, int target)
{
    if (maximum <= 0)
        return 1;
    const double raw = maximum / target;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (m * magnitude >= raw)
            return m * magnitude;
    }
    return 10 * magnitude;
}

QString shortNumber(double value)
{
    if (value >= 10000)
        return QString::number(value / 1000.0, 'f', value >= 100000 ? 0 : 1) + QLatin1Char('k');
    if (value >= 100)
        return QString::number(value, 'f', 0);
    if (value >= 10)
        return QString::number(value, 'f', 1);
    return QString::number(value, 'g', 2);
}

QString msLabel(double ms)
{
    if (ms >= 1000)
        return QString::number(ms / 1000.0, 'g', 3) + QStringLiteral(" s");
    if (ms >= 1)
        return QString::number(ms, 'g', 3) + QStringLiteral(" ms");
    return QString::number(ms * 1000.0, 'g', 3) + QStringLiteral(" µs");
}

QString panelTitle(const QList<ResultRow> &rows, const QString &key)
{
    for (const ResultRow &r : rows) {
        if (r.stageKey() == key)
            return QStringLiteral("%1 · c%2 · %3").arg(r.scenario).arg(r.connections).arg(r.requests);
    }
    return key;
}

QImage blankChart(int panels, const QString &title, const QString &subtitle, const QStringList &configs)
{
    QImage image(chartSize(panels), QImage::Format_ARGB32);
    image.fill(kChartBackground);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(kText);
    p.setFont(font(20, true));
    p.drawText(QRect(16, 8, image.width() - 32, 30), Qt::AlignLeft | Qt::AlignVCenter, title);
    p.setFont(font(13));
    p.drawText(QRect(16, 38, image.width() - 32, 20), Qt::AlignLeft | Qt::AlignVCenter, subtitle);
    // Legend: a swatch and the name of every configuration, wrapped.
    int x = 16;
    int y = 66;
    const QFontMetrics metrics(p.font());
    for (int i = 0; i < configs.size(); ++i) {
        const int width = 22 + metrics.horizontalAdvance(configs.at(i)) + 18;
        if (x + width > image.width() - 16) {
            x = 16;
            y += 20;
        }
        p.fillRect(QRect(x, y + 3, 14, 14), configurationColor(i));
        p.drawText(QRect(x + 20, y, width, 20), Qt::AlignLeft | Qt::AlignVCenter, configs.at(i));
        x += width;
    }
    return image;
}

QRect panelRect(int index)
{
    const int column = index % kChartColumns;
    const int row = index / kChartColumns;
    return QRect(column * kPanelWidth, kChartHeaderHeight + row * kPanelHeight, kPanelWidth, kPanelHeight);
}

// Plot area of a panel: room for the title above, the y labels left, the x labels below.
QRect plotRect(const QRect &panel)
{
    return panel.adjusted(70, 34, -14, -44);
}

void drawPanelFrame(QPainter &p, const QRect &panel, const QString &title, const QString &yTitle)
{
    p.setPen(kText);
    p.setFont(font(13, true));
    const QRect titleRect(panel.left() + 8, panel.top() + 6, panel.width() - 16, 22);
    p.drawText(titleRect, Qt::AlignHCenter | Qt::AlignVCenter,
               QFontMetrics(p.font()).elidedText(title, Qt::ElideRight, titleRect.width()));
    p.save();
    p.setFont(font(11));
    const QRect plot = plotRect(panel);
    p.translate(panel.left() + 14, plot.center().y());
    p.rotate(-90);
    p.drawText(QRect(-plot.height() / 2, -10, plot.height(), 20), Qt::AlignCenter, yTitle);
    p.restore();
}

} // namespace

QSize chartSize(int panels)
{
    const int rows = std::max(1, (panels + kChartColumns - 1) / kChartColumns);
    return QSize(kChartColumns * kPanelWidth, kChartHeaderHeight + rows * kPanelHeight + 8);
}

QImage requestsPerSecondChart(const QList<ResultRow> &rows, const QString &title)
{
    const QStringList configs = configurations(rows);
    const QStringList keys = stageKeys(rows);
    QImage image = blankChart(int(keys.size()), title,
                              QStringLiteral("Requests per second (completed responses ÷ measured time), higher is "
                                             "better; each panel has its own scale. ⚠ = client-bound"),
                              configs);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    for (int k = 0; k < keys.size(); ++k) {
        const QRect panel = panelRect(k);
        const QRect plot = plotRect(panel);
        drawPanelFrame(p, panel, panelTitle(rows, keys.at(k)), QStringLiteral("req/s"));
        QList<const ResultRow *> bars;
        for (const QString &config : configs) {
            for (const ResultRow &r : rows) {
                if (r.stageKey() == keys.at(k) && r.configuration == config)
                    bars << &r;
            }
        }
        double maximum = 0;
        for (const ResultRow *r : bars)
            maximum = std::max(maximum, r->requestsPerSecond);
        const double step = niceStep(maximum * 1.12, 4);
        const double top = std::max(step, std::ceil(maximum * 1.12 / step) * step);
        p.setFont(font(11));
        for (double v = 0; v <= top + step / 2; v += step) {
            const int y = plot.bottom() - int(v / top * plot.height());
            p.setPen(kGrid);
            p.drawLine(plot.left(), y, plot.right(), y);
            p.setPen(kText);
            p.drawText(QRect(plot.left() - 48, y - 8, 44, 16), Qt::AlignRight | Qt::AlignVCenter, shortNumber(v));
        }
        p.setPen(kAxis);
        p.drawLine(plot.bottomLeft(), plot.bottomRight());
        p.drawLine(plot.bottomLeft(), plot.topLeft());
        if (bars.isEmpty())
            continue;
        const double slot = double(plot.width()) / double(configs.size());
        for (const ResultRow *r : bars) {
            const int index = int(configs.indexOf(r->configuration));
            const int height = int(r->requestsPerSecond / top * plot.height());
            const QRectF bar(plot.left() + slot * index + slot * 0.15, plot.bottom() - height, slot * 0.7, height);
            p.fillRect(bar, configurationColor(index));
            p.setPen(kText);
            p.setFont(font(10));
            const QString label =
                shortNumber(r->requestsPerSecond) + (r->clientBound ? QStringLiteral("⚠") : QString());
            p.drawText(QRectF(bar.left() - 12, bar.top() - 16, bar.width() + 24, 14), Qt::AlignCenter, label);
        }
        p.setFont(font(10));
        p.setPen(kText);
        p.drawText(QRect(plot.left(), plot.bottom() + 4, plot.width(), 16), Qt::AlignCenter,
                   QStringLiteral("configuration (colours: legend)"));
    }
    return image;
}

QImage latencyChart(const QList<ResultRow> &rows, const QString &title)
{
    const QStringList configs = configurations(rows);
    const QStringList keys = stageKeys(rows);
    QImage image = blankChart(int(keys.size()), title,
                              QStringLiteral("Latency percentiles (corrected), log scale, lower is better; "
                                             "a missing line: no completed response"),
                              configs);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    const QStringList xLabels{QStringLiteral("p50"), QStringLiteral("p90"), QStringLiteral("p95"),
                              QStringLiteral("p99"), QStringLiteral("max")};
    for (int k = 0; k < keys.size(); ++k) {
        const QRect panel = panelRect(k);
        const QRect plot = plotRect(panel);
        drawPanelFrame(p, panel, panelTitle(rows, keys.at(k)), QStringLiteral("latency (log)"));
        double low = 1e300;
        double high = 0;
        for (const ResultRow &r : rows) {
            if (r.stageKey() != keys.at(k) || r.completed == 0)
                continue;
            for (double v : {r.p50Ms, r.maxMs}) {
                if (v > 0) {
                    low = std::min(low, v);
                    high = std::max(high, v);
                }
            }
        }
        if (high <= 0) {
            low = 1;
            high = 10;
        }
        const double lowDecade = std::floor(std::log10(low));
        const double highDecade = std::max(lowDecade + 1, std::ceil(std::log10(high)));
        auto yOf = [&](double ms) {
            const double t = (std::log10(std::max(ms, 1e-6)) - lowDecade) / (highDecade - lowDecade);
            return plot.bottom() - t * plot.height();
        };
        p.setFont(font(11));
        // Decades, and 2× / 5× lines as well when the panel spans few decades.
        const bool fine = highDecade - lowDecade <= 2;
        for (double d = lowDecade; d <= highDecade + 0.01; d += 1) {
            for (double m : {1.0, 2.0, 5.0}) {
                const double value = m * std::pow(10.0, d);
                if ((m > 1 && !fine) || std::log10(value) > highDecade + 1e-9)
                    continue;
                const int y = int(yOf(value));
                p.setPen(m > 1 ? QColor(0xee, 0xee, 0xee) : kGrid);
                p.drawLine(plot.left(), y, plot.right(), y);
                p.setPen(kText);
                p.drawText(QRect(plot.left() - 56, y - 8, 52, 16), Qt::AlignRight | Qt::AlignVCenter, msLabel(value));
            }
        }
        const double dx = double(plot.width()) / double(xLabels.size());
        auto xOf = [&](int i) { return plot.left() + dx * (i + 0.5); };
        for (int i = 0; i < xLabels.size(); ++i) {
            p.setPen(kText);
            p.drawText(QRectF(xOf(i) - 30, plot.bottom() + 4, 60, 16), Qt::AlignCenter, xLabels.at(i));
        }
        p.setFont(font(10));
        p.drawText(QRect(plot.left(), plot.bottom() + 22, plot.width(), 16), Qt::AlignCenter,
                   QStringLiteral("percentile"));
        p.setPen(kAxis);
        p.drawLine(plot.bottomLeft(), plot.bottomRight());
        p.drawLine(plot.bottomLeft(), plot.topLeft());
        for (const ResultRow &r : rows) {
            if (r.stageKey() != keys.at(k) || r.completed == 0)
                continue;
            const QColor color = configurationColor(int(configs.indexOf(r.configuration)));
            const double values[] = {r.p50Ms, r.p90Ms, r.p95Ms, r.p99Ms, r.maxMs};
            QPainterPath path;
            for (int i = 0; i < 5; ++i) {
                const QPointF point(xOf(i), yOf(values[i]));
                if (i == 0)
                    path.moveTo(point);
                else
                    path.lineTo(point);
            }
            p.setPen(QPen(color, 2.2));
            p.setBrush(Qt::NoBrush);
            p.drawPath(path);
            p.setBrush(color);
            for (int i = 0; i < 5; ++i)
                p.drawEllipse(QPointF(xOf(i), yOf(values[i])), 3.2, 3.2);
        }
        p.setBrush(Qt::NoBrush);
    }
    return image;
}

bool writeCharts(const QList<ResultRow> &rows, const QString &directory, const QString &subtitle, QString &error)
{
    const QDir dir(directory);
    const QString rpsPath = dir.filePath(QStringLiteral("requests-per-second.png"));
    const QString latencyPath = dir.filePath(QStringLiteral("latency.png"));
    if (!requestsPerSecondChart(rows, QStringLiteral("Requests per second by configuration — ") + subtitle)
             .save(rpsPath, "PNG")) {
        error = QStringLiteral("cannot write %1").arg(rpsPath);
        return false;
    }
    if (!latencyChart(rows, QStringLiteral("Latency percentiles by configuration — ") + subtitle)
             .save(latencyPath, "PNG")) {
        error = QStringLiteral("cannot write %1").arg(latencyPath);
        return false;
    }
    return true;
}

} // namespace taxicore::bench::suite
