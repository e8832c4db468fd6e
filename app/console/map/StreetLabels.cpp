#include "StreetLabels.h"

#include "MapViewport.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace {
constexpr double kDegree = std::numbers::pi / 180;

double length(QPointF d)
{
    return std::hypot(d.x(), d.y());
}

std::array<QPointF, 4> corners(const PlacedLabel &label, double padding)
{
    const double a = label.angle * kDegree;
    const QPointF along(std::cos(a), std::sin(a));
    const QPointF across(-along.y(), along.x());
    const double hw = label.size.width() / 2 + padding, hh = label.size.height() / 2 + padding;
    const QPointF c = label.centre;
    return {c - along * hw - across * hh, c + along * hw - across * hh, c + along * hw + across * hh,
            c - along * hw + across * hh};
}

double minScaleOf(int rank)
{
    switch (rank) {
    case 0:
        return StreetLabels::kMajorFromScale;
    case 1:
        return StreetLabels::kTertiaryFromScale;
    default:
        return StreetLabels::kMinorFromScale;
    }
}

// The straight stretch of at least `needPx` starting at points[first], as (last index), or -1.
int straightStretch(const std::vector<QPointF> &points, size_t first, double needPx)
{
    double run = 0;
    for (size_t last = first + 1; last < points.size(); ++last) {
        run += length(points[last] - points[last - 1]);
        if (run < needPx)
            continue;
        const QPointF chord = points[last] - points[first];
        const double chordLen = length(chord);
        if (chordLen < needPx)
            return -1; // too winding: the path is longer than the way across
        const QPointF dir = chord / chordLen;
        for (size_t i = first + 1; i <= last; ++i) {
            const QPointF seg = points[i] - points[i - 1];
            const double segLen = length(seg);
            if (segLen > 0.5) {
                const double cosA = (seg.x() * dir.x() + seg.y() * dir.y()) / segLen;
                if (cosA < std::cos(StreetLabels::kMaxBendDeg * kDegree))
                    return -1;
            }
            const QPointF off = points[i] - points[first];
            if (std::abs(off.x() * dir.y() - off.y() * dir.x()) > StreetLabels::kMaxOffsetPx)
                return -1;
        }
        return int(last);
    }
    return -1;
}
// The part of segment a-b inside `rect` (Liang-Barsky), or false when none is.
bool clip(QPointF &a, QPointF &b, const QRectF &rect)
{
    double t0 = 0, t1 = 1;
    const QPointF d = b - a;
    const double p[4] = {-d.x(), d.x(), -d.y(), d.y()};
    const double q[4] = {a.x() - rect.left(), rect.right() - a.x(), a.y() - rect.top(), rect.bottom() - a.y()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
    }
    if (t0 > t1)
        return false;
    const QPointF start = a + d * t0;
    b = a + d * t1;
    a = start;
    return true;
}

// The street in screen pixels, cut to the view into runs, with a point at least every
// kStepPx so that a long straight piece offers many places for its name.
void visibleRuns(const std::vector<QPointF> &points, const MapViewport &viewport, const QRectF &view,
                 std::vector<std::vector<QPointF>> &runs)
{
    constexpr double kStepPx = 24;
    runs.clear();
    bool open = false;
    QPointF prev = viewport.toScreen(points[0]);
    for (size_t i = 1; i < points.size(); ++i) {
        const QPointF next = viewport.toScreen(points[i]);
        QPointF a = prev, b = next;
        prev = next;
        if (!clip(a, b, view)) {
            open = false;
            continue;
        }
        if (!open || runs.back().back() != a) {
            runs.emplace_back();
            runs.back().push_back(a);
        }
        open = true;
        const int pieces = std::max(1, int(std::ceil(length(b - a) / kStepPx)));
        for (int k = 1; k <= pieces; ++k)
            runs.back().push_back(a + (b - a) * (double(k) / pieces));
        open = (b == next); // the run goes on only if the segment ended inside
    }
}
} // namespace

QPolygonF PlacedLabel::box() const
{
    const auto c = corners(*this, 0);
    return QPolygonF({c[0], c[1], c[2], c[3], c[0]});
}

namespace StreetLabels {

bool overlap(const PlacedLabel &a, const PlacedLabel &b, double padding)
{
    const auto ca = corners(a, padding / 2), cb = corners(b, padding / 2);
    for (const auto *poly : {&ca, &cb}) {
        for (int e = 0; e < 2; ++e) { // a rectangle has two edge directions
            const QPointF edge = (*poly)[size_t(e) + 1] - (*poly)[size_t(e)];
            const QPointF axis(-edge.y(), edge.x());
            double minA = 1e300, maxA = -1e300, minB = 1e300, maxB = -1e300;
            for (const QPointF p : ca) {
                const double d = p.x() * axis.x() + p.y() * axis.y();
                minA = std::min(minA, d);
                maxA = std::max(maxA, d);
            }
            for (const QPointF p : cb) {
                const double d = p.x() * axis.x() + p.y() * axis.y();
                minB = std::min(minB, d);
                maxB = std::max(maxB, d);
            }
            if (maxA <= minB || maxB <= minA)
                return false;
        }
    }
    return true;
}

std::vector<PlacedLabel> place(const std::vector<NamedStreet> &streets, const MapViewport &viewport,
                               const Measure &measure, const std::vector<QRectF> &reserved)
{
    const double scale = viewport.scale();
    const QRectF view(QPointF(0, 0), viewport.size());
    const QRectF viewM = QRectF(viewport.toMetres({0, 0}), viewport.toMetres({view.width(), view.height()}));

    // Major streets first, longer ones first within a rank: they name the city.
    std::vector<const NamedStreet *> order;
    for (const auto &street : streets) {
        if (scale >= minScaleOf(street.rank) && street.points.size() >= 2 && street.bounds.intersects(viewM))
            order.push_back(&street);
    }
    std::stable_sort(order.begin(), order.end(), [](const NamedStreet *a, const NamedStreet *b) {
        if (a->rank != b->rank)
            return a->rank < b->rank;
        return a->bounds.width() + a->bounds.height() > b->bounds.width() + b->bounds.height();
    });

    std::vector<PlacedLabel> placed;
    std::vector<std::vector<QPointF>> runs;
    for (const NamedStreet *street : order) {
        if (int(placed.size()) >= kMaxLabels)
            break;
        const QSizeF size = measure(street->name);
        const double need = size.width() + 2 * kPaddingPx;
        visibleRuns(street->points, viewport, view, runs);
        for (const auto &screen : runs) {
            double sinceLast = kRepeatPx; // road since this street's last label
            for (size_t first = 0; first + 1 < screen.size(); ++first) {
                const double step = length(screen[first + 1] - screen[first]);
                const int last = sinceLast < kRepeatPx ? -1 : straightStretch(screen, first, need);
                if (last < 0) {
                    sinceLast += step;
                    continue;
                }
                const QPointF a = screen[first], b = screen[size_t(last)];
                double angle = std::atan2(b.y() - a.y(), b.x() - a.x()) / kDegree;
                if (angle > 90)
                    angle -= 180; // read left to right, never upside down
                else if (angle <= -90)
                    angle += 180;
                PlacedLabel label{street->name, (a + b) / 2, angle, size};
                const QRectF bounds = label.box().boundingRect();
                const bool free =
                    view.contains(bounds)
                    && std::none_of(reserved.begin(), reserved.end(),
                                    [&](const QRectF &area) { return area.intersects(bounds); })
                    && std::none_of(placed.begin(), placed.end(), [&](const PlacedLabel &other) {
                           return overlap(label, other, kPaddingPx)
                                  || (other.text == label.text && length(other.centre - label.centre) < kSameNameGapPx);
                       });
                if (!free) {
                    sinceLast += step;
                    continue;
                }
                placed.push_back(std::move(label));
                sinceLast = 0;
                if (int(placed.size()) >= kMaxLabels)
                    return placed;
            }
        }
    }
    return placed;
}

} // namespace StreetLabels
