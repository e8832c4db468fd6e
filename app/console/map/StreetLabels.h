#pragma once

#include <QPointF>
#include <QPolygonF>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <functional>
#include <vector>

class MapViewport;

// A street as the labels see it: consecutive road pieces of one name joined end to end.
struct NamedStreet {
    QString name;
    int rank = 0;                // 0 major (motorway … secondary), 1 tertiary, 2 the rest
    std::vector<QPointF> points; // projected metres
    QRectF bounds;               // of points, metres
};

// A name placed along a straight enough stretch of its street, centred on it and turned with it
// (never upside down).
struct PlacedLabel {
    QString text;
    QPointF centre;   // px
    double angle = 0; // degrees, clockwise, in (-90, 90]
    QSizeF size;      // of the text's box, px

    QPolygonF box() const; // the turned box, px
};

namespace StreetLabels {
// Which streets get a name at a zoom (px per metre): only the major ones from afar.
inline constexpr double kMajorFromScale = 0.12;
inline constexpr double kTertiaryFromScale = 0.45;
inline constexpr double kMinorFromScale = 1.2;
inline constexpr double kMaxBendDeg = 22;     // along the stretch a label sits on
inline constexpr double kMaxOffsetPx = 3;     // a point's distance from the label's baseline
inline constexpr double kPaddingPx = 6;       // kept free around a label
inline constexpr double kRepeatPx = 420;      // a street's name again after this much road
inline constexpr double kSameNameGapPx = 260; // between two labels of one name (dual carriageways)
inline constexpr int kMaxLabels = 90;

using Measure = std::function<QSizeF(const QString &)>;

// Labels for the streets in view, the most important first, none overlapping another (with
// kPaddingPx), sticking out of the view or touching a `reserved` area (the map's controls).
std::vector<PlacedLabel> place(const std::vector<NamedStreet> &streets, const MapViewport &viewport,
                               const Measure &measure, const std::vector<QRectF> &reserved = {});
// Whether two turned boxes overlap, grown by `padding` px (separating-axis test).
bool overlap(const PlacedLabel &a, const PlacedLabel &b, double padding = 0);
} // namespace StreetLabels
