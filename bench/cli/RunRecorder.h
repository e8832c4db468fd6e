#pragma once

#include "../engine/Target.h"

#include <QJsonObject>
#include <chrono>
#include <string>

namespace taxicore::bench {

// `--record-to URL`: after the run, asks the TaxiCore server at URL for its mode (GET /healthz)
// and records the run's summary there as a "benchmark" event (POST /admin/v1/events), with
// `Authorization: Bearer <token>` when a token is given. Blocking, one short connection per
// request, each bounded by `timeout`. Empty on success (201), else one sentence saying why not.
std::string recordRun(const Target &server, const QJsonObject &resultJson, const std::string &token,
                      std::chrono::milliseconds timeout);

} // namespace taxicore::bench
