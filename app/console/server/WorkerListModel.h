#pragma once

#include "region/RegionLayout.h"

#include <QAbstractListModel>
#include <QPointer>
#include <QTimer>
#include <array>
#include <qqmlregistration.h>
#include <vector>

class ConsoleBackend;

// One row per serving process (slot 0: the in-process server; 1..: worker processes), from
// their shared-memory slots once a second: pid, state, req/s, p99, CPU %, RSS, restarts,
// heartbeat age. Also the whole server's p99 over the last second.
class WorkerListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(double p99Ms READ p99Ms NOTIFY sampled)

public:
    enum Roles {
        SlotRole = Qt::UserRole,
        PidRole,
        StateRole, // taxicore::workerSlotStateName: starting, serving, draining, exited
        RequestsPerSecondRole,
        P99MsRole,
        CpuPercentRole,
        RssMbRole,
        RestartsRole,
        HeartbeatAgeMsRole,
    };
    Q_ENUM(Roles)

    static constexpr int kSampleIntervalMs = 1000;
    using Buckets = std::array<uint64_t, taxicore::kLatencyBuckets>;

    explicit WorkerListModel(QObject *parent = nullptr);
    ~WorkerListModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    double p99Ms() const { return m_p99Ms; }

    // SIGKILL for a worker process (never the console itself), to watch the supervisor respawn it.
    Q_INVOKABLE bool killWorker(int slot);
    Q_INVOKABLE void sample();

    // The latency under which fraction `p` of the requests in `buckets` fell, in µs (the upper
    // edge of the bucket: bucket i holds latencies < 2^(i/2) µs); 0 when empty.
    static double percentileUs(const Buckets &buckets, double p);

Q_SIGNALS:
    void backendChanged();
    void sampled();

private:
    struct Row {
        int slot = 0;
        int pid = 0;
        taxicore::WorkerSlotState state = taxicore::WorkerSlotState::Unused;
        double requestsPerSecond = 0;
        double p99Ms = 0;
        double cpuPercent = 0;
        double rssMb = 0;
        uint32_t restarts = 0;
        qint64 heartbeatAgeMs = 0;
        // Counters at the previous sample, for per-second figures.
        uint64_t requests = 0;
        Buckets latency{};
    };

    QPointer<ConsoleBackend> m_backend;
    std::vector<Row> m_rows;
    std::array<Row, taxicore::kMaxWorkers> m_previous{};
    double m_p99Ms = 0;
    QTimer m_timer;
};
