// The console's backend over a real embedded server (in-process, port 0, its own ledger in a
// temporary directory, settings in a temporary QSettings path): reassigning a booking through
// the bookings model (checked by QAbstractItemModelTester), and the settings the console keeps
// across restarts — last execution model, tariff, demand rate — restored at the next start,
// with flags given on the command line winning.
#include "BookingListModel.h"
#include "ConsoleBackend.h"
#include "settings/ConsoleSettings.h"

#include "fleet/FleetStore.h"

#include "ConsoleKit.h"

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <limits>
#include <memory>
#include <optional>

namespace {
constexpr int kApplyTimeoutMs = 20000;
constexpr taxicore::LatLng kPickup{57.7065, 11.9670};

// The options `args` give, as the console's main() reads them (stored settings included).
taxicore::ServerOptions optionsFrom(const QStringList &args)
{
    return taxicore::test::consoleOptions(args, taxicore::test::StoredSettings::Restore);
}
} // namespace

class ConsoleBackendTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void reassignThroughTheBookingsModel();
    void settingsSurviveARestart();
    void commandLineWinsOverStoredSettings();
    void badPricingIsRefusedAndNotStored();
    void aStoredDemandRateOutOfRangeIsIgnored();

private:
    // A backend serving on an ephemeral port with `args`; null (test failed) if it cannot start.
    std::unique_ptr<ConsoleBackend> startBackend(const QStringList &args = {});

    std::unique_ptr<QTemporaryDir> m_settingsDir;
    std::unique_ptr<QTemporaryDir> m_dataDir;
};

void ConsoleBackendTest::init()
{
    // Every test starts from empty settings of its own.
    m_settingsDir = std::make_unique<QTemporaryDir>();
    m_dataDir = std::make_unique<QTemporaryDir>();
    taxicore::test::useSettingsDirectory(m_settingsDir->path());
    QSettings().clear();
}

void ConsoleBackendTest::cleanup()
{
    m_settingsDir.reset();
    m_dataDir.reset();
}

std::unique_ptr<ConsoleBackend> ConsoleBackendTest::startBackend(const QStringList &args)
{
    taxicore::ServerOptions options =
        optionsFrom(QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"),
                                QStringLiteral("60"), QStringLiteral("--sim-speed"), QStringLiteral("0.001"),
                                QStringLiteral("--data-dir"), m_dataDir->path()}
                    + args);
    auto backend = std::make_unique<ConsoleBackend>(options);
    if (!backend->start()) {
        qWarning("the backend did not start: %s", qPrintable(backend->errorString()));
        return nullptr;
    }
    return backend;
}

void ConsoleBackendTest::reassignThroughTheBookingsModel()
{
    auto backend = startBackend();
    QVERIFY(backend);
    BookingListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBackend(backend.get());

    taxicore::FleetStore &fleet = *backend->fleet();
    const auto booked = fleet.book(QStringLiteral("console-rider"), kPickup, std::nullopt, 60'000,
                                   [](taxicore::LatLng, const std::vector<taxicore::LatLng> &cars) {
                                       return std::vector<double>(cars.size(), 60.0);
                                   });
    QCOMPARE(booked.result, taxicore::FleetStore::BookResult::Booked);
    const auto id = qint64(booked.booking.id);
    model.refresh();
    const int row = model.rowOf(id);
    QVERIFY(row >= 0);
    QCOMPARE(model.data(model.index(row), BookingListModel::CarIdRole).toInt(), booked.booking.carId);

    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    const QVariantMap result = model.reassign(id);
    QVERIFY2(result.value(QStringLiteral("ok")).toBool(), qPrintable(result.value(QStringLiteral("error")).toString()));
    const int newCar = result.value(QStringLiteral("carId")).toInt();
    QVERIFY(newCar > 0 && newCar != booked.booking.carId);
    QCOMPARE(result.value(QStringLiteral("previousCarId")).toInt(), booked.booking.carId);
    // The row changed in place (bookingsChanged refreshed the model at once).
    QVERIFY(!changed.isEmpty());
    QCOMPARE(model.data(model.index(model.rowOf(id)), BookingListModel::CarIdRole).toInt(), newCar);
    QCOMPARE(fleet.car(booked.booking.carId)->state, taxicore::CarState::Available);

    // A named car that is taken, and a booking that is gone, are refused with a reason.
    const QVariantMap taken = model.reassign(id, newCar);
    QVERIFY(!taken.value(QStringLiteral("ok")).toBool());
    QVERIFY(taken.value(QStringLiteral("error")).toString().contains(QString::number(newCar)));
    QVERIFY(model.cancel(id));
    const QVariantMap cancelled = model.reassign(id);
    QVERIFY(!cancelled.value(QStringLiteral("ok")).toBool());
    QVERIFY(cancelled.value(QStringLiteral("error")).toString().contains(QLatin1String("cancelled")));
    QCOMPARE(model.data(model.index(model.rowOf(id)), BookingListModel::StateRole).toString(),
             QStringLiteral("cancelled"));
}

void ConsoleBackendTest::settingsSurviveARestart()
{
    {
        auto backend = startBackend();
        QVERIFY(backend);
        QCOMPARE(backend->mode(), QStringLiteral("single"));
        const QString error = backend->applyPricing({{QStringLiteral("currency"), QStringLiteral("EUR")},
                                                     {QStringLiteral("base"), 4.5},
                                                     {QStringLiteral("per_km"), 1.25},
                                                     {QStringLiteral("per_min"), 0.5},
                                                     {QStringLiteral("minimum"), 9}},
                                                    12.5);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // Applied to the running server at once.
        QCOMPARE(backend->tariff().value(QStringLiteral("currency")).toString(), QStringLiteral("EUR"));
        QCOMPARE(backend->tariff().value(QStringLiteral("per_km")).toDouble(), 1.25);
        QCOMPARE(backend->demandRate(), 12.5);

        QSignalSpy applied(backend.get(), &ConsoleBackend::runtimeApplied);
        backend->applyRuntime(QStringLiteral("pool"), 0, 3, QStringLiteral("round-robin"));
        QVERIFY(applied.wait(kApplyTimeoutMs));
        QCOMPARE(applied.first().first().toString(), QString());
        QCOMPARE(backend->mode(), QStringLiteral("pool"));
        backend->stop();
    }
    // The next start: the same mode, pool size, tariff and demand rate, without any flag.
    auto again = startBackend();
    QVERIFY(again);
    QCOMPARE(again->mode(), QStringLiteral("pool"));
    QCOMPARE(again->threads(), 3);
    const QVariantMap tariff = again->tariff();
    QCOMPARE(tariff.value(QStringLiteral("currency")).toString(), QStringLiteral("EUR"));
    QCOMPARE(tariff.value(QStringLiteral("base")).toDouble(), 4.5);
    QCOMPARE(tariff.value(QStringLiteral("per_km")).toDouble(), 1.25);
    QCOMPARE(tariff.value(QStringLiteral("per_min")).toDouble(), 0.5);
    QCOMPARE(tariff.value(QStringLiteral("minimum")).toDouble(), 9.0);
    QCOMPARE(again->demandRate(), 12.5);
}

void ConsoleBackendTest::commandLineWinsOverStoredSettings()
{
    taxicore::RuntimeSettings stored;
    stored.mode = taxicore::RuntimeMode::Pool;
    stored.threads = 5;
    ConsoleSettings::saveRuntime(stored);
    ConsoleSettings::saveDemandRate(30);

    const taxicore::ServerOptions flagged = optionsFrom(
        {QStringLiteral("--mode"), QStringLiteral("single"), QStringLiteral("--demand-rate"), QStringLiteral("2")});
    QCOMPARE(flagged.mode, QStringLiteral("single"));
    QCOMPARE(flagged.demandRatePerMinute, 2.0);
    QCOMPARE(flagged.threads, 5); // not given: the stored one

    const taxicore::ServerOptions plain = optionsFrom({});
    QCOMPARE(plain.mode, QStringLiteral("pool"));
    QCOMPARE(plain.demandRatePerMinute, 30.0);

    // A hand-edited settings file cannot start a broken server: bad values are ignored.
    QSettings().setValue(QStringLiteral("server/mode"), QStringLiteral("turbo"));
    QSettings().setValue(QStringLiteral("server/threads"), 100000);
    QSettings().setValue(QStringLiteral("pricing/tariff"), QVariantMap{{QStringLiteral("base"), -3}});
    const taxicore::ServerOptions repaired = optionsFrom({});
    QCOMPARE(repaired.mode, QStringLiteral("single"));
    QCOMPARE(repaired.threads, 0);
    QCOMPARE(repaired.tariff.base, taxicore::Tariff{}.base);
}

void ConsoleBackendTest::badPricingIsRefusedAndNotStored()
{
    auto backend = startBackend();
    QVERIFY(backend);
    const double base = backend->tariff().value(QStringLiteral("base")).toDouble();
    QString error = backend->applyPricing({{QStringLiteral("base"), -1}}, 1);
    QVERIFY2(error.contains(QLatin1String("base")), qPrintable(error));
    error = backend->applyPricing({{QStringLiteral("base"), 10}}, -5);
    QVERIFY2(error.contains(QLatin1String("demand")), qPrintable(error));
    QCOMPARE(backend->tariff().value(QStringLiteral("base")).toDouble(), base);
    QVERIFY(!ConsoleSettings::tariff());
    QVERIFY(!ConsoleSettings::demandRate());
}

// A settings file edited by hand: a rate the flag and the API refuse (over 6000 a minute, inf,
// negative) is not taken from it either; the rate then comes from the flag or the default.
void ConsoleBackendTest::aStoredDemandRateOutOfRangeIsIgnored()
{
    for (const double stored : {1e300, std::numeric_limits<double>::infinity(), 6000.5, -1.0}) {
        QSettings().setValue(QStringLiteral("pricing/demandRate"), stored);
        QVERIFY2(!ConsoleSettings::demandRate(), qPrintable(QString::number(stored)));
    }
    QSettings().setValue(QStringLiteral("pricing/demandRate"), 6000.0);
    QCOMPARE(ConsoleSettings::demandRate(), std::optional<double>(6000.0));
    QSettings().remove(QStringLiteral("pricing/demandRate"));
}

QTEST_GUILESS_MAIN(ConsoleBackendTest)
#include "console_backend_test.moc"
