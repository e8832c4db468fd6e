#include "WeightedMixPlan.h"

#include <algorithm>
#include <stdexcept>

namespace taxicore::bench {

namespace {

class WeightedMixSource : public RequestSource {
public:
    WeightedMixSource(const std::vector<std::string> &rendered, const std::vector<double> &cumulative)
        : m_rendered(rendered)
        , m_cumulative(cumulative)
    {
    }

    std::string_view nextRequest(FastRandom &random) override
    {
        if (m_rendered.size() == 1)
            return m_rendered.front();
        const double pick = random.uniform();
        const auto it = std::upper_bound(m_cumulative.begin(), m_cumulative.end(), pick);
        m_lastIndex = std::min<std::size_t>(static_cast<std::size_t>(it - m_cumulative.begin()), m_rendered.size() - 1);
        return m_rendered[m_lastIndex];
    }

    int kindOfLastRequest() const override { return static_cast<int>(m_lastIndex); }

private:
    const std::vector<std::string> &m_rendered;
    const std::vector<double> &m_cumulative;
    std::size_t m_lastIndex = 0;
};

} // namespace

WeightedMixPlan::WeightedMixPlan(std::vector<MixEntry> entries, const RequestRenderer &renderer)
    : m_entries(std::move(entries))
{
    if (m_entries.empty())
        throw std::invalid_argument("a request mix needs at least one entry");
    double total = 0;
    for (const MixEntry &entry : m_entries)
        total += std::max(0.0, entry.weight);
    if (total <= 0)
        throw std::invalid_argument("a request mix needs a positive weight");
    double running = 0;
    for (const MixEntry &entry : m_entries) {
        m_rendered.push_back(renderer.render(entry.method, entry.path, entry.body));
        running += std::max(0.0, entry.weight);
        m_cumulativeWeights.push_back(running / total);
    }
}

std::unique_ptr<RequestSource> WeightedMixPlan::makeSource(uint32_t) const
{
    return std::make_unique<WeightedMixSource>(m_rendered, m_cumulativeWeights);
}

std::string WeightedMixPlan::describe() const
{
    std::string text;
    for (const MixEntry &entry : m_entries) {
        if (!text.empty())
            text += ", ";
        text += entry.method + " " + entry.path;
    }
    return text;
}

std::vector<std::string> WeightedMixPlan::kindNames() const
{
    if (m_entries.size() < 2)
        return {};
    std::vector<std::string> names;
    for (const MixEntry &entry : m_entries)
        names.push_back(entry.method + " " + entry.path);
    return names;
}

} // namespace taxicore::bench
