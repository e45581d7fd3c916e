#include "report/collectivereport.h"

#include "base/jsoncursor.h"

namespace railyard::engine {

Json collectiveJson(const CollectiveResult &r, const CollectiveRequest &req, const Topology &t)
{
    Json j;
    j["op"] = toString(r.op);
    j["algorithm"] = toString(r.algorithm);
    if (r.algorithm != Algorithm::FlatRing)
        j["protocol"] = toString(r.protocol);
    j["ranks"] = r.ranks;
    j["size_bytes"] = r.bytes;
    j["time_s"] = r.timeS;
    j["latency_s"] = r.latencyS;
    j["algbw_gbps"] = r.algbwGBps;
    j["busbw_gbps"] = r.busbwGBps;
    j["bottleneck_gbps"] = r.bottleneckGBps;
    j["bottleneck"] = r.bottleneck;
    if (r.algorithm == Algorithm::FlatRing)
        j["efficiency"] = req.efficiency.value_or(1.0);
    j["notes"] = r.notes;
    if (req.wantLinks) {
        Json links = Json::array();
        for (const LinkBytes &lb : r.links) {
            const Link &l = t.links()[static_cast<std::size_t>(lb.link)];
            links.push_back({{"id", lb.link},
                             {"name", t.linkName(lb.link)},
                             {"kind", toString(l.kind)},
                             {"bytes_up", lb.up},
                             {"bytes_down", lb.down}});
        }
        j["links"] = links;
    }
    return j;
}

} // namespace railyard::engine
