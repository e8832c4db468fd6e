// The importer's tag rules: drivable classes, one-way, maxspeed, access.

#include "city/WayRules.h"

#include <QTest>

using namespace taxicore::city;

class WayRulesTest : public QObject {
    Q_OBJECT
private slots:
    void drivableClassesAreKeptAndOthersDropped()
    {
        for (const char *highway :
             {"motorway", "trunk", "primary", "secondary", "tertiary", "unclassified", "residential", "living_street",
              "service", "motorway_link", "trunk_link", "primary_link", "secondary_link", "tertiary_link", "road"})
            QVERIFY2(drivableRoadClass(highway).has_value(), highway);
        for (const char *highway : {"footway", "cycleway", "path", "steps", "pedestrian", "track", "bridleway",
                                    "construction", "platform", "proposed", ""})
            QVERIFY2(!drivableRoadClass(highway).has_value(), highway);
    }

    void maxspeedIsParsedInKilometresPerHour()
    {
        QCOMPARE(parseMaxspeedKmh("50").value(), 50.0);
        QCOMPARE(parseMaxspeedKmh(" 70 km/h").value(), 70.0);
        QCOMPARE(parseMaxspeedKmh("30 mph").value(), 30 * 1.609344);
        QCOMPARE(parseMaxspeedKmh("10 knots").value(), 18.52);
        QCOMPARE(parseMaxspeedKmh("SE:urban").value(), 50.0);
        QCOMPARE(parseMaxspeedKmh("50;30").value(), 50.0);
        QVERIFY(!parseMaxspeedKmh("none").has_value());
        QVERIFY(!parseMaxspeedKmh("signals").has_value());
        QVERIFY(!parseMaxspeedKmh("fast").has_value());
        QVERIFY(!parseMaxspeedKmh("0").has_value());
        QVERIFY(!parseMaxspeedKmh("").has_value());
    }

    void onewayValuesAndImplicitOneways()
    {
        QCOMPARE(parseOneway("yes", false), TravelDirection::Forward);
        QCOMPARE(parseOneway("1", false), TravelDirection::Forward);
        QCOMPARE(parseOneway("true", false), TravelDirection::Forward);
        QCOMPARE(parseOneway("-1", false), TravelDirection::Backward);
        QCOMPARE(parseOneway("reverse", false), TravelDirection::Backward);
        QCOMPARE(parseOneway("no", true), TravelDirection::Both);
        QCOMPARE(parseOneway("", false), TravelDirection::Both);
        QCOMPARE(parseOneway("", true), TravelDirection::Forward);
        QCOMPARE(parseOneway("reversible", false), TravelDirection::None);

        RawWay roundabout;
        roundabout.highway = "tertiary";
        roundabout.junction = "roundabout";
        QCOMPARE(classifyWay(roundabout)->direction, TravelDirection::Forward);
        RawWay motorway;
        motorway.highway = "motorway";
        QCOMPARE(classifyWay(motorway)->direction, TravelDirection::Forward);
        motorway.oneway = "no";
        QCOMPARE(classifyWay(motorway)->direction, TravelDirection::Both);
    }

    void speedFallsBackToTheClassDefault()
    {
        RawWay way;
        way.highway = "residential";
        QCOMPARE(classifyWay(way)->speedKmh, defaultSpeedKmh(RoadClass::Residential));
        way.maxspeed = "none";
        QCOMPARE(classifyWay(way)->speedKmh, defaultSpeedKmh(RoadClass::Residential));
        way.maxspeed = "40";
        QCOMPARE(classifyWay(way)->speedKmh, 40.0);
    }

    void accessRestrictionsExcludeWays()
    {
        QVERIFY(carAccessAllowed("", "", ""));
        QVERIFY(!carAccessAllowed("no", "", ""));
        QVERIFY(!carAccessAllowed("private", "", ""));
        QVERIFY(carAccessAllowed("no", "yes", ""));
        QVERIFY(!carAccessAllowed("", "no", ""));
        QVERIFY(carAccessAllowed("", "no", "destination"));
        RawWay way;
        way.highway = "service";
        QVERIFY(classifyWay(way).has_value());
        way.service = "emergency_access";
        QVERIFY(!classifyWay(way).has_value());
        way.service.clear();
        way.area = "yes";
        QVERIFY(!classifyWay(way).has_value());
    }
};

QTEST_GUILESS_MAIN(WayRulesTest)
#include "city_way_rules_test.moc"
