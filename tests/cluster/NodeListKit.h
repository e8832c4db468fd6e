#pragma once
// The cluster's node list as a test reads it: GET /admin/v1/cluster on a node, one node of it by
// name, the leader's name.
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QJsonObject>

namespace taxicore::test {

// The node list `server` answers, or an empty object when it does not answer 200.
inline QJsonObject clusterOf(const ServerProcess &server, const Headers &headers = {})
{
    HttpClient client(server.host(), server.port());
    const HttpResponse answer = client.request("GET", "/admin/v1/cluster", {}, headers);
    return answer.status == 200 ? answer.json() : QJsonObject{};
}

inline QJsonObject nodeNamed(const QJsonObject &cluster, const QString &name)
{
    for (const QJsonValue node : cluster.value(QStringLiteral("nodes")).toArray())
        if (node.toObject().value(QStringLiteral("name")).toString() == name)
            return node.toObject();
    return {};
}

// The name of the node that leads (holds the simulator's lock); empty when none does.
inline QString leaderOf(const QJsonObject &cluster)
{
    for (const QJsonValue node : cluster.value(QStringLiteral("nodes")).toArray())
        if (node.toObject().value(QStringLiteral("leader")).toBool())
            return node.toObject().value(QStringLiteral("name")).toString();
    return {};
}

} // namespace taxicore::test
