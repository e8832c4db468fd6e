#pragma once

#include <QJsonObject>
#include <QString>

namespace taxicore::bench {

// The compact summary of a run that the server's ledger keeps as a "benchmark" event (the
// console's benchmark panel and `taxicore-bench --record-to` both record it): what was measured
// (url, scenario, server mode) and how it went (requests/s, p50/p99, errors). Built from the
// result JSON (runResultToJson, also the last --progress line), so a reader of that line needs
// nothing else. With several stages the totals span them all, the latencies are the worst
// stage's, and `stages` lists each one.
QJsonObject benchmarkEventDetail(const QJsonObject &resultJson, const QString &serverMode);

// The request body of POST /admin/v1/events for that summary.
QJsonObject benchmarkEventBody(const QJsonObject &detail);

} // namespace taxicore::bench
