#pragma once

#include "wire/ConnectionLimits.h"
#include "runtime/RuntimeController.h"
#include "runtime/ServerOptions.h"

#include <QThread>
#include <atomic>
#include <future>
#include <memory>

namespace taxicore::city {
class City;
}

namespace taxicore {

class ConnectionGuard;
class FleetStore;
class Ledger;

// The primary's I/O thread: owns the listening sockets, the in-process server (connection guard,
// HTTP service, handler pool) and the dispatcher that hands connections to it or to workers.
// Everything it creates lives and dies on this thread.
class PrimaryIoThread : public QThread {
    Q_OBJECT
public:
    struct Started {
        bool ok = false;
        quint16 port = 0;
        QString error;
        RuntimeController::InProcess inProcess{};
    };

    PrimaryIoThread(const ServerOptions &options, FleetStore &fleet, std::shared_ptr<const city::City> city,
                    Ledger *ledger, ConnectionLimits limits = {});
    ~PrimaryIoThread() override;

    // Starts the thread and waits until it listens or fails.
    Started startAndWait();
    // Shuts the listening sockets down, so new clients are refused from now on (any thread, even
    // while the I/O thread is busy with a request).
    void closeListeners();
    // Stops accepting, lets in-flight requests finish (up to graceMs), then ends the thread.
    void drainAndStop(int graceMs);

protected:
    void run() override;

private:
    ServerOptions m_options;
    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    Ledger *m_ledger;
    ConnectionLimits m_limits;
    std::promise<Started> m_started;
    std::atomic<QObject *> m_stopTarget{nullptr};
    std::atomic<ConnectionGuard *> m_guard{nullptr};
};

} // namespace taxicore
