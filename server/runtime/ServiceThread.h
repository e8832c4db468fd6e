#pragma once

#include "http/ConnectionLimits.h"
#include "runtime/ServerOptions.h"

#include <QThread>
#include <atomic>
#include <future>
#include <memory>

namespace taxicore::city {
class City;
}

namespace taxicore {

class FleetStore;

// The I/O thread: owns the listening socket, the connection guard and the HTTP service, and
// runs its own event loop. Everything it creates lives and dies on this thread.
class ServiceThread : public QThread {
    Q_OBJECT
public:
    struct Started {
        bool ok = false;
        quint16 port = 0;
        QString error;
    };

    ServiceThread(const ServerOptions &options, FleetStore &fleet, std::shared_ptr<const city::City> city,
                  ConnectionLimits limits = {});
    ~ServiceThread() override;

    // Starts the thread and waits until it listens or fails.
    Started startAndWait();
    // Drains connections (in-flight requests finish, up to graceMs) and ends the thread.
    void drainAndStop(int graceMs);

protected:
    void run() override;

private:
    ServerOptions m_options;
    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    ConnectionLimits m_limits;
    std::promise<Started> m_started;
    std::atomic<QObject *> m_stopTarget{nullptr};
};

} // namespace taxicore
