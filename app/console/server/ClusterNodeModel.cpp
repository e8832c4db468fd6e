#include "ClusterNodeModel.h"

#include "ConsoleBackend.h"

#include <QJsonArray>
#include <algorithm>

namespace {

QString nameOf(const QJsonObject &node)
{
    return node.value(QStringLiteral("name")).toString();
}

} // namespace

ClusterNodeModel::ClusterNodeModel(QObject *parent)
    : QAbstractListModel(parent)
{
    m_timer.setInterval(kSampleIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &ClusterNodeModel::sample);
}

ClusterNodeModel::~ClusterNodeModel() = default;

int ClusterNodeModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_nodes.size());
}

QVariant ClusterNodeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &node = m_nodes[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return nameOf(node);
    case UrlRole:
        return node.value(QStringLiteral("url")).toString();
    case ModeRole:
        return node.value(QStringLiteral("mode")).toString();
    case WorkersRole:
        return node.value(QStringLiteral("workers")).toInt();
    case ThreadsRole:
        return node.value(QStringLiteral("threads")).toInt();
    case RequestsPerSecondRole:
        return node.value(QStringLiteral("req_per_s")).toDouble();
    case HealthRole:
        return node.value(QStringLiteral("health")).toString();
    case AgeMsRole:
        return node.value(QStringLiteral("age_ms")).toInteger();
    case LeaderRole:
        return node.value(QStringLiteral("leader")).toBool();
    case LedgerOkRole:
        return node.value(QStringLiteral("ledger_ok")).toBool(true);
    }
    return {};
}

QHash<int, QByteArray> ClusterNodeModel::roleNames() const
{
    return {{NameRole, "name"},        {UrlRole, "url"},         {ModeRole, "mode"},
            {WorkersRole, "workers"},  {ThreadsRole, "threads"}, {RequestsPerSecondRole, "requestsPerSecond"},
            {HealthRole, "health"},    {AgeMsRole, "ageMs"},     {LeaderRole, "leader"},
            {LedgerOkRole, "ledgerOk"}};
}

ConsoleBackend *ClusterNodeModel::backend() const
{
    return m_backend;
}

void ClusterNodeModel::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    m_backend ? m_timer.start() : m_timer.stop();
    Q_EMIT backendChanged();
    sample();
}

void ClusterNodeModel::sample()
{
    apply(m_backend ? m_backend->clusterNodes() : QJsonObject{});
}

void ClusterNodeModel::apply(const QJsonObject &cluster)
{
    std::vector<QJsonObject> nodes;
    for (const QJsonValue node : cluster.value(QStringLiteral("nodes")).toArray())
        nodes.push_back(node.toObject());
    // The same nodes in the same order (the usual second): their figures change in place, so a
    // view keeps its rows; otherwise the list is rebuilt.
    const bool sameNodes =
        std::equal(nodes.begin(), nodes.end(), m_nodes.begin(), m_nodes.end(),
                   [](const QJsonObject &a, const QJsonObject &b) { return nameOf(a) == nameOf(b); });
    if (sameNodes) {
        m_nodes = std::move(nodes);
        if (!m_nodes.empty())
            Q_EMIT dataChanged(index(0), index(int(m_nodes.size()) - 1));
    } else {
        beginResetModel();
        m_nodes = std::move(nodes);
        endResetModel();
    }
    m_inCluster = cluster.value(QStringLiteral("cluster")).toBool();
    m_directoryError = cluster.value(QStringLiteral("directory_error")).toString();
    Q_EMIT sampled();
}
