#include "ledger/SqliteLedger.h"

#include "ledger/LedgerFileIdentity.h"

#include <QDir>
#include <QFileInfo>
#include <chrono>

namespace taxicore {

namespace {

QString prepareDirectory(const QString &dataDir, bool createIfMissing)
{
    if (dataDir.isEmpty())
        return QStringLiteral("ledger: no data directory given");
    const QFileInfo info(dataDir);
    if (info.exists() && !info.isDir())
        return QStringLiteral("ledger %1: the data directory is a file").arg(dataDir);
    if (!createIfMissing && !QFileInfo(ledgerFilePath(dataDir)).isFile())
        return QStringLiteral("ledger %1: the file is gone (its data directory deleted while the server ran?); "
                              "not made again here: restart the server")
            .arg(ledgerFilePath(dataDir));
    if (!QDir().mkpath(dataDir))
        return QStringLiteral("ledger %1: cannot create the data directory (unwritable parent?)").arg(dataDir);
    const QFileInfo file(ledgerFilePath(dataDir));
    if (file.exists() && !file.isFile())
        return QStringLiteral("ledger %1: exists but is not a file").arg(file.filePath());
    return {};
}

} // namespace

SqliteLedger::SqliteLedger(const LedgerOptions &options)
    : Ledger(options)
    , m_file(ledgerFilePath(options.dataDir))
    , m_reader(options)
    , m_writer(m_file, options)
{
}

SqliteLedger::~SqliteLedger() = default;

Ledger::Opened SqliteLedger::open(const LedgerOptions &options)
{
    if (QString error = prepareDirectory(options.dataDir, options.createIfMissing); !error.isEmpty())
        return {nullptr, error};
    // A worker: before anything opens the file (which would make a -shm of its own if it was
    // deleted: a second WAL index, writers not excluding each other), the files must be the primary's.
    if (!options.expectedFiles.isEmpty()) {
        if (QString error = LedgerFileIdentity::verify(ledgerFilePath(options.dataDir), options.expectedFiles);
            !error.isEmpty())
            return {nullptr, error};
    }
    std::unique_ptr<SqliteLedger> ledger(new SqliteLedger(options));
    if (QString error = ledger->m_writer.start(); !error.isEmpty())
        return {nullptr, error};
    return {std::move(ledger), {}};
}

void SqliteLedger::append(LedgerRecord record, Done done)
{
    m_writer.append(std::move(record), std::move(done));
}

} // namespace taxicore
