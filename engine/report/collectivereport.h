#pragma once

#include "base/jsonvalue.h"
#include "collectives/collective.h"
#include "topology/topology.h"

namespace railyard::engine {

// DESIGN.md's `collective --json` object (the keys are listed in the README's "JSON output"):
// `op`, `algorithm`, `protocol` (not for flat-ring), `ranks`, `size_bytes`, `time_s`,
// `latency_s`, `algbw_gbps`, `busbw_gbps`, `bottleneck_gbps`, `bottleneck`, `efficiency`
// (flat-ring only), `notes`, and with request.wantLinks `links` [{`id`, `name`, `kind`,
// `bytes_up`, `bytes_down`}].
Json collectiveJson(const CollectiveResult &result,
                    const CollectiveRequest &request,
                    const Topology &topology);

} // namespace railyard::engine
