#include "WorkerListModel.h"

#include "ConsoleBackend.h"

#include "fleet/FleetStore.h"
#include "metrics/ProcessStats.h"

#include <cmath>
#include <csignal>
#include <unistd.h>

WorkerListModel::WorkerListModel(QObject *parent)
    : QAbstractListModel(parent)
{
    m_timer.setInterval(kSampleIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &WorkerListModel::sample);
}

WorkerListModel::~WorkerListModel() = default;

int WorkerListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant WorkerListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &r = m_rows[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case SlotRole:
        return r.slot;
    case PidRole:
        return r.pid;
    case StateRole:
        return QString::fromLatin1(taxicore::workerSlotStateName(r.state));
    case RequestsPerSecondRole:
        return r.requestsPerSecond;
    case P99MsRole:
        return r.p99Ms;
    case CpuPercentRole:
        return r.cpuPercent;
    case RssMbRole:
        return r.rssMb;
    case RestartsRole:
        return r.restarts;
    case HeartbeatAgeMsRole:
        return r.heartbeatAgeMs;
    }
    return {};
}

QHash<int, QByteArray> WorkerListModel::roleNames() const
{
    return {{SlotRole, "slot"},
            {PidRole, "pid"},
            {StateRole, "workerState"},
            {RequestsPerSecondRole, "requestsPerSecond"},
            {P99MsRole, "p99Ms"},
            {CpuPercentRole, "cpuPercent"},
            {RssMbRole, "rssMb"},
            {RestartsRole, "restarts"},
            {HeartbeatAgeMsRole, "heartbeatAgeMs"}};
}

ConsoleBackend *WorkerListModel::backend() const
{
    return m_backend;
}

void WorkerListModel::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    m_backend ? m_timer.start() : m_timer.stop();
    Q_EMIT backendChanged();
    sample();
}

double WorkerListModel::percentileUs(const Buckets &buckets, double p)
{
    uint64_t total = 0;
    for (uint64_t n : buckets)
        total += n;
    if (total == 0)
        return 0;
    const auto rank = uint64_t(std::ceil(p * double(total)));
    uint64_t seen = 0;
    for (size_t i = 0; i < buckets.size(); ++i) {
        seen += buckets[i];
        if (seen >= rank)
            return std::exp2(double(i) / 2.0);
    }
    return std::exp2(double(buckets.size() - 1) / 2.0);
}

void WorkerListModel::sample()
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    std::vector<Row> rows;
    Buckets allLatency{};
    const qint64 now = taxicore::clock::monotonicMs();
    const double seconds = kSampleIntervalMs / 1000.0;
    for (int slot = 0; fleet && slot < taxicore::kMaxWorkers; ++slot) {
        const taxicore::WorkerSlot &s = fleet->workerSlot(slot);
        const taxicore::WorkerSlotState state = s.state.load(std::memory_order_relaxed);
        if (state == taxicore::WorkerSlotState::Unused)
            continue;
        Row row;
        row.slot = slot;
        row.pid = s.pid.load(std::memory_order_relaxed);
        row.state = state;
        row.restarts = s.restarts.load(std::memory_order_relaxed);
        row.heartbeatAgeMs = now - s.heartbeatMs.load(std::memory_order_relaxed);
        row.requests = s.requests.load(std::memory_order_relaxed);
        Buckets delta{};
        Row &previous = m_previous[size_t(slot)];
        const bool samePid = previous.pid == row.pid;
        for (size_t i = 0; i < delta.size(); ++i) {
            row.latency[i] = s.latency[i].load(std::memory_order_relaxed);
            delta[i] = samePid && row.latency[i] >= previous.latency[i] ? row.latency[i] - previous.latency[i] : 0;
            allLatency[i] += delta[i];
        }
        row.requestsPerSecond =
            samePid && row.requests >= previous.requests ? double(row.requests - previous.requests) / seconds : 0;
        row.p99Ms = percentileUs(delta, 0.99) / 1000.0;
        if (row.pid > 0 && state != taxicore::WorkerSlotState::Exited) {
            const taxicore::ProcessStats stats = taxicore::sampleProcess(row.pid);
            row.cpuPercent = stats.cpuPercent;
            row.rssMb = double(stats.rssKb) / 1024.0;
        }
        previous = row;
        rows.push_back(row);
    }
    m_p99Ms = percentileUs(allLatency, 0.99) / 1000.0;

    // Few rows that change every second: a reset is simpler than a diff and cheap here.
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
    Q_EMIT sampled();
}

bool WorkerListModel::killWorker(int slot)
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    if (!fleet || slot <= 0 || slot >= taxicore::kMaxWorkers)
        return false;
    const int pid = fleet->workerSlot(slot).pid.load(std::memory_order_relaxed);
    if (pid <= 0 || pid == getpid())
        return false;
    return ::kill(pid, SIGKILL) == 0;
}
