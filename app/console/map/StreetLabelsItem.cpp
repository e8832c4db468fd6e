#include "StreetLabelsItem.h"

#include "CityMapItem.h"
#include "CityRoads.h"

#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QLoggingCategory>
#include <QPainter>
#include <QPainterPath>

namespace {
// QT_LOGGING_RULES="taxicore.map.labels.debug=true" shows how long the names took to prepare.
Q_LOGGING_CATEGORY(lcLabels, "taxicore.map.labels", QtInfoMsg)
constexpr int kFontPx = 11;
constexpr double kHaloWidthPx = 3;
} // namespace

StreetLabelsItem::StreetLabelsItem(QQuickItem *parent)
    : QQuickPaintedItem(parent)
{
    m_font.setPixelSize(kFontPx);
    m_font.setWeight(QFont::DemiBold);
    setAntialiasing(true);
    connect(this, &StreetLabelsItem::styleChanged, this, [this] { update(); });
    // A new size moves the view's edges: labels are placed again.
    connect(this, &QQuickItem::widthChanged, this, &QQuickItem::polish);
    connect(this, &QQuickItem::heightChanged, this, &QQuickItem::polish);
}

CityMapItem *StreetLabelsItem::map() const
{
    return m_map;
}

void StreetLabelsItem::setMap(CityMapItem *map)
{
    if (m_map == map)
        return;
    if (m_map)
        disconnect(m_map, nullptr, this, nullptr);
    m_map = map;
    if (m_map) {
        connect(m_map, &CityMapItem::viewChanged, this, &QQuickItem::polish);
        connect(m_map, &CityMapItem::cityChanged, this, &StreetLabelsItem::loadStreets);
    }
    loadStreets();
    Q_EMIT mapChanged();
}

void StreetLabelsItem::loadStreets()
{
    const auto city = m_map ? m_map->city() : nullptr;
    if (city.get() == m_streetsOf)
        return;
    m_streetsOf = city.get();
    QElapsedTimer clock;
    clock.start();
    m_streets = city ? CityRoads::namedStreets(*city, m_map->projection()) : std::vector<NamedStreet>();
    qCDebug(lcLabels, "%zu named streets prepared in %lld ms", m_streets.size(), qlonglong(clock.elapsed()));
    Q_EMIT streetsChanged();
    polish();
}

QVariantList StreetLabelsItem::placed() const
{
    QVariantList out;
    for (const auto &label : m_placed) {
        out.append(QVariantMap{{QStringLiteral("text"), label.text},
                               {QStringLiteral("x"), label.centre.x()},
                               {QStringLiteral("y"), label.centre.y()},
                               {QStringLiteral("angle"), label.angle},
                               {QStringLiteral("width"), label.size.width()},
                               {QStringLiteral("height"), label.size.height()}});
    }
    return out;
}

void StreetLabelsItem::setReservedAreas(const QList<QRectF> &areas)
{
    if (areas == m_reserved)
        return;
    m_reserved = areas;
    Q_EMIT styleChanged();
    polish();
}

void StreetLabelsItem::updatePolish()
{
    std::vector<PlacedLabel> placed;
    if (m_map) {
        const QFontMetricsF metrics(m_font);
        placed = StreetLabels::place(
            m_streets, m_map->viewport(),
            [&metrics](const QString &text) {
                return QSizeF(metrics.horizontalAdvance(text), metrics.ascent() + metrics.descent());
            },
            std::vector<QRectF>(m_reserved.begin(), m_reserved.end()));
    }
    const bool changed = !(placed.empty() && m_placed.empty());
    m_placed = std::move(placed);
    // Nothing to show (zoomed out): no full-window texture to blend each frame.
    setVisible(!m_placed.empty());
    if (changed) {
        update();
        Q_EMIT placedChanged();
    }
}

void StreetLabelsItem::paint(QPainter *painter)
{
    // Render thread, GUI thread blocked: m_placed is only written in updatePolish.
    const QFontMetricsF metrics(m_font);
    painter->setRenderHint(QPainter::Antialiasing);
    const QPen halo(m_haloColor, kHaloWidthPx, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    for (const auto &label : m_placed) {
        QPainterPath path;
        path.addText(-label.size.width() / 2, metrics.ascent() - label.size.height() / 2, m_font, label.text);
        painter->save();
        painter->translate(label.centre);
        painter->rotate(label.angle);
        painter->strokePath(path, halo);
        painter->fillPath(path, m_textColor);
        painter->restore();
    }
}
