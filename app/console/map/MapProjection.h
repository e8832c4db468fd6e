#pragma once

#include <QPointF>

// Equirectangular projection around a fixed origin: metres east (x) and south (y, as on screen).
// Off by well under 1 % across a city, and cheap enough to run for every car on every frame.
class MapProjection {
public:
    // Defaults to the centre of the bundled city (central Gothenburg).
    explicit MapProjection(double originLat = 57.705, double originLng = 11.975);

    QPointF toMetres(double lat, double lng) const
    {
        return {(lng - m_originLng) * m_metresPerDegreeLng, (m_originLat - lat) * m_metresPerDegreeLat};
    }
    QPointF toLatLng(QPointF metres) const; // x = lng, y = lat

private:
    double m_originLat;
    double m_originLng;
    double m_metresPerDegreeLat;
    double m_metresPerDegreeLng;
};
