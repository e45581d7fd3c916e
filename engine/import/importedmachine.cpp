#include "import/importedmachine.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"

namespace railyard::engine {

namespace {

std::string safe(const std::string &s)
{
    return echo(s, 1000);
}

} // namespace

std::map<std::string, int> ImportedMachine::linkCounts() const
{
    std::map<std::string, int> counts;
    for (const ImportedLink &l : links)
        ++counts[l.kind];
    return counts;
}

int ImportedMachine::nvlinkLanes() const
{
    int lanes = 0;
    for (const ImportedLink &l : links)
        if (l.kind == "nvlink")
            lanes += l.count;
    return lanes;
}

const Measurement *ImportedMachine::largest() const
{
    const Measurement *best = nullptr;
    for (const Measurement &m : measurements)
        if (!m.inPlace && (!best || m.sizeBytes >= best->sizeBytes))
            best = &m;
    return best;
}

Json importSummary(const ImportedMachine &m)
{
    Json j = Json::object();
    j["format"] = m.format;
    j["file"] = safe(m.file);
    if (!m.hosts.empty())
        j["hosts"] = m.hosts.size();
    j["gpus"] = m.gpus.size();
    j["nics"] = m.nics.size();
    Json links = Json::object();
    for (const auto &[kind, n] : m.linkCounts())
        links[kind] = n;
    j["links"] = links;
    if (!m.gpus.empty()) {
        Json per = Json::array();
        for (const ImportedGpu &g : m.gpus)
            per.push_back(g.nvlinks);
        j["nvlinks_per_gpu"] = per;
    }
    if (m.nvswitches > 0)
        j["nvswitches"] = m.nvswitches;
    if (m.pcieSwitches > 0)
        j["pcie_switches"] = m.pcieSwitches;
    if (m.numaNodes > 0)
        j["numa_nodes"] = m.numaNodes;
    if (!m.collective.empty()) {
        j["collective"] = safe(m.collective);
        j["ranks"] = m.ranks;
        Json ms = Json::array();
        for (const Measurement &x : m.measurements)
            ms.push_back({{"op", safe(x.op)},
                          {"size_bytes", x.sizeBytes},
                          {"count", x.count},
                          {"type", safe(x.type)},
                          {"time_us", x.timeUs},
                          {"algbw_gbps", x.algbwGBps},
                          {"busbw_gbps", x.busbwGBps},
                          {"in_place", x.inPlace}});
        j["measurements"] = ms;
    }
    if (!m.graphs.empty()) {
        Json gs = Json::array();
        for (const NcclGraph &g : m.graphs) {
            Json ch = Json::array();
            for (const NcclChannel &c : g.channels)
                ch.push_back({{"gpus", c.gpus}, {"nets", c.nets}});
            gs.push_back({{"id", g.id},
                          {"pattern", safe(g.pattern)},
                          {"speed_intra_gbps", g.speedIntra},
                          {"speed_inter_gbps", g.speedInter},
                          {"type_intra", safe(g.typeIntra)},
                          {"type_inter", safe(g.typeInter)},
                          {"channels", ch}});
        }
        j["graphs"] = gs;
    }
    Json notes = Json::array();
    for (const std::string &n : m.notes)
        notes.push_back(safe(n));
    j["notes"] = notes;
    return j;
}

} // namespace railyard::engine
