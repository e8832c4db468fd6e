#include "fleet/FleetStore.h"

#include "fleet/SharedMemoryFleet.h"
#include "region/Clock.h"
#include "region/SharedRegion.h"

namespace taxicore {

std::unique_ptr<FleetStore> FleetStore::open(SharedRegion &region, const QString &url, QString *error)
{
    if (url.isEmpty() || url == QLatin1String("shm:"))
        return std::make_unique<SharedMemoryFleet>(region);
    if (error)
        *error = QStringLiteral("unknown fleet backend \"%1\": empty or \"shm:\" (this machine's shared memory), "
                                "or redis://host:port for a node of a cluster")
                     .arg(url);
    return nullptr;
}

FleetStore::FleetStore(SharedRegion &region)
    : m_base(region.base())
{
}

double FleetStore::simSpeed() const
{
    const double speed = control().simSpeed.load(std::memory_order_relaxed);
    return speed > 0 ? speed : 1.0;
}

double FleetStore::simulatedSeconds(int64_t fromMs, int64_t toMs) const
{
    return double(toMs - fromMs) / 1000.0 * simSpeed();
}

double FleetStore::simulatedSecondsSince(int64_t monotonicMs, int64_t wallMs) const
{
    if (monotonicMs != 0)
        return double(clock::monotonicMs() - monotonicMs) / 1000.0 * simSpeed();
    return simulatedSeconds(wallMs, clock::wallMs());
}

ControlBlock &FleetStore::control() const
{
    return *reinterpret_cast<ControlBlock *>(m_base + RegionOffsets::control);
}

PricingBlock &FleetStore::pricing() const
{
    return *reinterpret_cast<PricingBlock *>(m_base + RegionOffsets::pricing);
}

WorkerSlot &FleetStore::workerSlot(int index) const
{
    return reinterpret_cast<WorkerSlot *>(m_base + RegionOffsets::workers)[index];
}

} // namespace taxicore
