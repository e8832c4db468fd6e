#pragma once

#include "RequestPlan.h"
#include "RequestRenderer.h"

#include <string>
#include <vector>

namespace taxicore::bench {

// One kind of request in a mix, picked with probability weight / sum of weights.
struct MixEntry {
    double weight = 1;
    std::string method = "GET";
    std::string path = "/";
    std::string body; // JSON, sent with Content-Type: application/json when not empty
};

// A stateless mix: every request is rendered once, before the run; each connection picks the
// next one at random by weight (or always the same one when there is only one).
class WeightedMixPlan : public RequestPlan {
public:
    WeightedMixPlan(std::vector<MixEntry> entries, const RequestRenderer &renderer);
    // Sources point into the plan's rendered requests: it must stay where it was made.
    WeightedMixPlan(const WeightedMixPlan &) = delete;
    WeightedMixPlan &operator=(const WeightedMixPlan &) = delete;

    std::unique_ptr<RequestSource> makeSource(uint32_t connectionIndex) const override;
    std::string describe() const override;
    std::vector<std::string> kindNames() const override;

    const std::vector<MixEntry> &entries() const { return m_entries; }

private:
    std::vector<MixEntry> m_entries;
    std::vector<std::string> m_rendered;
    std::vector<double> m_cumulativeWeights; // normalised: the last one is 1
};

} // namespace taxicore::bench
