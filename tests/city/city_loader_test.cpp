// The loader's clear errors: a missing, truncated, foreign, newer or corrupt file, or one whose
// counts or indices are out of range (with a valid checksum), is refused with the file name and
// the problem; never a crash.

#include "city/Checksum.h"
#include "city/City.h"
#include "city/CityImporter.h"
#include "CityTestSupport.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>

using namespace taxicore::city;

namespace {
constexpr int kFuzzRounds = 1000;
}

class CityLoaderTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QByteArray m_valid;

    QString write(const char *name, const QByteArray &bytes)
    {
        const QString path = m_dir.filePath(QLatin1String(name));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    static void resign(QByteArray &bytes)
    {
        const uint64_t checksum = cityChecksum(reinterpret_cast<const unsigned char *>(bytes.constData()),
                                               size_t(bytes.size()), format::kChecksumOffset);
        std::memcpy(bytes.data() + format::kChecksumOffset, &checksum, sizeof checksum);
    }

    template <typename T> static void poke(QByteArray &bytes, size_t offset, T value)
    {
        std::memcpy(bytes.data() + offset, &value, sizeof value);
    }

    static format::Header header(const QByteArray &bytes)
    {
        format::Header h;
        std::memcpy(&h, bytes.constData(), sizeof h);
        return h;
    }

    void expectError(const char *name, const QByteArray &bytes, const char *problem)
    {
        const QString path = write(name, bytes);
        const CityLoadResult result = City::load(path);
        QVERIFY(!result.city);
        QVERIFY2(result.error.startsWith(path + QLatin1String(": ")), qPrintable(result.error));
        QVERIFY2(result.error.contains(QLatin1String(problem)), qPrintable(result.error));
    }

    // Every query on a file that passed validation must stay in bounds (run under ASan/UBSan).
    static void exercise(const City &city)
    {
        std::mt19937_64 rng(1);
        const RoadPoint a = city.snap({57.700, 11.972});
        const RoadPoint b = city.randomRoadPoint(rng);
        const Route route = city.route(a, b);
        const std::vector<RoadPoint> sources = {a, b, city.snap({57.706, 11.975})};
        const std::vector<double> etas = city.etaTo(b, sources, 3600);
        QVERIFY(etas.size() == sources.size() && route.polyline.size() < 1000000);
        QVERIFY(!city.mapJson().isEmpty());
        Q_UNUSED(city.streetName(a));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString path = m_dir.filePath(QStringLiteral("valid.taxicity"));
        QCOMPARE(importCity(citytest::fixturePath("small-network.geojson"), path), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        m_valid = file.readAll();
        QVERIFY(City::load(path).city);
    }

    void missingFile()
    {
        const CityLoadResult result = City::load(QStringLiteral("/nonexistent/city.taxicity"));
        QVERIFY(!result.city);
        QCOMPARE(result.error, QStringLiteral("/nonexistent/city.taxicity: no such file"));
    }

    void emptyAndTruncatedFiles()
    {
        expectError("empty.taxicity", QByteArray(), "truncated");
        expectError("short.taxicity", m_valid.left(100), "truncated");
        expectError("cut.taxicity", m_valid.left(m_valid.size() - 16), "truncated");
    }

    void badMagic()
    {
        QByteArray bytes = m_valid;
        bytes[0] = 'X';
        expectError("magic.taxicity", bytes, "bad magic");
        expectError("json.taxicity", QByteArray(400, '{'), "bad magic");
    }

    void wrongVersion()
    {
        QByteArray bytes = m_valid;
        poke<uint32_t>(bytes, 8, format::kVersion + 1);
        expectError("version.taxicity", bytes, "unsupported version 2");
    }

    void checksumMismatch()
    {
        QByteArray bytes = m_valid;
        bytes[bytes.size() - 3] = char(bytes[bytes.size() - 3] ^ 0x5a);
        expectError("corrupt.taxicity", bytes, "checksum mismatch");
    }

    void countsOutOfRange()
    {
        QByteArray bytes = m_valid;
        poke<uint32_t>(bytes, offsetof(format::Header, nodeCount), 0xFFFFFFF0u);
        resign(bytes);
        expectError("counts.taxicity", bytes, "counts out of range");

        bytes = m_valid;
        poke<uint32_t>(bytes, offsetof(format::Header, segmentCount), header(m_valid).segmentCount + 1);
        resign(bytes);
        expectError("segments.taxicity", bytes, "section segments");

        bytes = m_valid;
        format::SectionEntry outside{uint64_t(bytes.size()) - 8, 64};
        poke(bytes, offsetof(format::Header, sections) + format::Arcs * sizeof(format::SectionEntry), outside);
        resign(bytes);
        expectError("section.taxicity", bytes, "outside the file");
    }

    void indicesOutOfRange()
    {
        const format::Header h = header(m_valid);
        QByteArray bytes = m_valid;
        poke<uint32_t>(bytes, h.sections[format::Arcs].offset, 12345); // first arc's head
        resign(bytes);
        expectError("arc.taxicity", bytes, "arc refers to a missing node");

        bytes = m_valid;
        poke<uint32_t>(bytes, h.sections[format::UpArcs].offset + 8, 777); // first up arc's via
        resign(bytes);
        expectError("via.taxicity", bytes, "hierarchy arc");

        bytes = m_valid;
        poke<uint32_t>(bytes, h.sections[format::GridItems].offset + 4, 99); // piece
        resign(bytes);
        expectError("grid.taxicity", bytes, "grid item");

        bytes = m_valid;
        poke<uint32_t>(bytes, h.sections[format::ShapeFirst].offset + 4,
                       1); // segment 0 shape of 1 point
        resign(bytes);
        expectError("shape.taxicity", bytes, "segment");
    }

    // Random byte flips with a recomputed checksum: every result is a clean load or a clean error.
    void randomCorruptionNeverCrashes()
    {
        QRandomGenerator rng(42);
        int loaded = 0;
        for (int round = 0; round < kFuzzRounds; ++round) {
            QByteArray bytes = m_valid;
            const int flips = 1 + int(rng.bounded(2));
            for (int i = 0; i < flips; ++i)
                bytes[int(rng.bounded(bytes.size()))] = char(rng.bounded(256));
            resign(bytes);
            const QString path = write("fuzz.taxicity", bytes);
            const CityLoadResult result = City::load(path);
            QVERIFY(result.city || !result.error.isEmpty());
            if (result.city) {
                exercise(*result.city);
                ++loaded;
            }
        }
        qInfo("%d of %d corrupted files passed validation and were queried", loaded, kFuzzRounds);
    }
};

QTEST_GUILESS_MAIN(CityLoaderTest)
#include "city_loader_test.moc"
