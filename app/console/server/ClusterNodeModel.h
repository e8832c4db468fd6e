#pragma once

#include <QAbstractListModel>
#include <QJsonObject>
#include <QPointer>
#include <QTimer>
#include <qqmlregistration.h>
#include <vector>

class ConsoleBackend;

// One row per node of the cluster the console's server belongs to (its own included), from the
// server's node directory once a second: name, address, mode, req/s, health (up / stale), leader.
// Reading it never waits on Redis (the directory's own thread does that), so it runs on the GUI thread.
class ClusterNodeModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    // True when the server is a node of a cluster (--fleet redis://…), false when it serves alone.
    Q_PROPERTY(bool inCluster READ inCluster NOTIFY sampled)
    // Why the last read of the directory failed (Redis away); empty when it worked.
    Q_PROPERTY(QString directoryError READ directoryError NOTIFY sampled)
    Q_PROPERTY(int count READ count NOTIFY sampled)

public:
    enum Roles {
        NameRole = Qt::UserRole,
        UrlRole,
        ModeRole,
        WorkersRole,
        ThreadsRole,
        RequestsPerSecondRole,
        HealthRole, // "up" or "stale"
        AgeMsRole,
        LeaderRole,
        LedgerOkRole,
    };
    Q_ENUM(Roles)

    static constexpr int kSampleIntervalMs = 1000;

    explicit ClusterNodeModel(QObject *parent = nullptr);
    ~ClusterNodeModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    bool inCluster() const { return m_inCluster; }
    int count() const { return int(m_nodes.size()); }
    QString directoryError() const { return m_directoryError; }

    Q_INVOKABLE void sample();
    // Takes the rows of a GET /admin/v1/cluster answer (what sample() does with the backend's).
    void apply(const QJsonObject &cluster);

Q_SIGNALS:
    void backendChanged();
    void sampled();

private:
    QPointer<ConsoleBackend> m_backend;
    std::vector<QJsonObject> m_nodes;
    bool m_inCluster = false;
    QString m_directoryError;
    QTimer m_timer;
};
