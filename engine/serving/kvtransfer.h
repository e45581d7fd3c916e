#pragma once

// Disaggregated serving: each request's KV cache, written by its prefill GPUs, sent to the decode
// GPUs that will attend to it, on the links between them (NVLink inside an NVLink domain such
// as a GB200 NVL72 rack; across servers the host path, the NICs, the leaves and the spine).
// Every decode rank receives the layers of its stage and its share of the KV heads (all of the
// MLA latent, which every attention-TP rank keeps whole) from the prefill rank that holds them.

#include "collectives/trafficpattern.h"
#include "serving/servingsetup.h"

#include <vector>

namespace railyard::engine {

class LinkTraffic;
class Topology;

struct KvTransfer
{
    double bytesPerRequest = 0; // on the wire, all flows of one request
    double latencyS = 0;        // per transfer (a point-to-point send's)
    bool crossesDomains = false;
    int flows = 0; // sends per request
    // One request's bytes per link, averaged over the prefill -> decode replica pairs that
    // requests are spread over (both directions), sorted by link.
    std::vector<LinkShare> perRequest;
    // The representative request's own links: its bytes on each, and the link's achieved
    // bytes per second.
    struct PathLink
    {
        int link = 0;
        double bytes = 0;
        double rate = 0;
        double averageBytes = 0; // per request, over all pairs
    };
    std::vector<PathLink> path;
    // Of `path`, the links that can be the slowest at some request rate (no other link has both
    // more seconds per transfer and more load per request/s): what timeS() looks at.
    std::vector<PathLink> slowest;

    bool empty() const { return flows == 0; }
    // Seconds for one request's transfer when `requestsPerS` requests transfer every second
    // (each link shared by the transfers crossing it: processor sharing, time / (1 - load)).
    double timeS(double requestsPerS) const;
    // The request rate at which the busiest link is saturated (infinity without transfers).
    double maxRequestsPerS() const;
    // The busiest link at `requestsPerS`: its load (bytes per second / achieved rate).
    double peakLoad(double requestsPerS, int *link = nullptr) const;
};

// The transfer of a request of `inputTokens` from the prefill pool to the decode pool.
KvTransfer planKvTransfer(const Topology &topology,
                          const ServingSetup &setup,
                          const PoolGroups &prefill,
                          const PoolGroups &decode,
                          double inputTokens,
                          LinkTraffic &scratch);

// The part of a transfer of `transferS` a request waits for after a prefill of `prefillS`:
// all of it, or, when the stack sends layer by layer as the prefill produces them, what
// remains after the prefill (at least the last layer's share).
double exposedKvTransfer(double transferS, double prefillS, int layers, bool layerwise);

} // namespace railyard::engine
