#include "ledger/Ledger.h"

#include <QDir>
#include <QFileInfo>
#include <chrono>

namespace taxicore {

namespace {

QString prepareDirectory(const QString &dataDir) {
    if (dataDir.isEmpty())
        return QStringLiteral("ledger: no data directory given");
    const QFileInfo info(dataDir);
    if (info.exists() && !info.isDir())
        return QStringLiteral("ledger %1: the data directory is a file").arg(dataDir);
    if (!QDir().mkpath(dataDir))
        return QStringLiteral("ledger %1: cannot create the data directory (unwritable parent?)")
            .arg(dataDir);
    const QFileInfo file(ledgerFilePath(dataDir));
    if (file.exists() && !file.isFile())
        return QStringLiteral("ledger %1: exists but is not a file").arg(file.filePath());
    return {};
}

} // namespace

Ledger::Ledger(const LedgerOptions &options)
    : m_options(options)
    , m_file(ledgerFilePath(options.dataDir))
    , m_reader(options)
    , m_writer(m_file, options) {}

Ledger::~Ledger() = default;

Ledger::Opened Ledger::open(const LedgerOptions &options) {
    if (QString error = prepareDirectory(options.dataDir); !error.isEmpty())
        return {nullptr, error};
    std::unique_ptr<Ledger> ledger(new Ledger(options));
    if (QString error = ledger->m_writer.start(); !error.isEmpty())
        return {nullptr, error};
    return {std::move(ledger), {}};
}

void Ledger::append(LedgerRecord record, Done done) {
    m_writer.append(std::move(record), std::move(done));
}

bool Ledger::appendAndWait(LedgerRecord record, QString *error, int timeoutMs) {
    // Shared: the callback may still run after a timeout has returned.
    auto verdict = std::make_shared<std::promise<QString>>();
    std::future<QString> result = verdict->get_future();
    append(std::move(record), [verdict](bool committed, const QString &why) {
        verdict->set_value(committed ? QString()
                                     : (why.isEmpty() ? QStringLiteral("not committed") : why));
    });
    QString message;
    if (result.wait_for(std::chrono::milliseconds(timeoutMs)) != std::future_status::ready)
        message = QStringLiteral("ledger %1: no commit within %2 ms").arg(m_file).arg(timeoutMs);
    else
        message = result.get();
    if (error)
        *error = message;
    return message.isEmpty();
}

} // namespace taxicore
