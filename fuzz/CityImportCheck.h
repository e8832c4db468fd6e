#pragma once
// The city importer fuzz targets share this: write the input to a file with the importer's
// expected suffix, import it, and require that what the importer writes the loader accepts.

#include "city/CityImporter.h"
#include "city/CityLoader.h"
#include "FuzzChecks.h"

#include <QFile>
#include <QTemporaryDir>

namespace taxicore::fuzz {

inline void importAndCheck(const uint8_t *data, size_t size, const QString &inputName)
{
    static QTemporaryDir dir; // one per process: libFuzzer runs millions of inputs
    TAXICORE_FUZZ_CHECK(dir.isValid());
    const QString input = dir.filePath(inputName);
    const QString output = dir.filePath(QStringLiteral("out.city"));
    QFile::remove(output);
    {
        QFile file(input);
        TAXICORE_FUZZ_CHECK(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        TAXICORE_FUZZ_CHECK(file.write(reinterpret_cast<const char *>(data), qint64(size)) == qint64(size));
    }
    const QString error = city::importCity(input, output);
    if (!error.isEmpty()) {
        TAXICORE_FUZZ_CHECK(error.contains(input)); // every error names the file
        return;
    }
    QFile written(output);
    city::CityData loaded;
    const QString loadError = city::mapCityFile(written, loaded);
    if (!loadError.isEmpty())
        std::fprintf(stderr, "the loader refused an imported city: %s\n", qPrintable(loadError));
    TAXICORE_FUZZ_CHECK(loadError.isEmpty());
}

} // namespace taxicore::fuzz
