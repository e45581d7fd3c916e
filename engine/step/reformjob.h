#pragma once

// A job with GPUs out (cluster.faults: a GPU or a server down), re-formed as a restarted job
// would be: on spare GPUs when the cluster has enough idle ones, else elastically, without
// the data-parallel replicas that lost a GPU (the global batch kept). evaluate() prices the
// re-formed job and says which policy it modelled.

#include "layout/layout.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

struct ReformedJob
{
    bool ok = false;
    std::string error; // why the job cannot run on what is left
    Layout layout;     // the job that runs: the layout itself when no rank lost its GPU
    bool changed = false;
    std::string policy;               // what was done, in words (a warning of the evaluation)
    std::vector<int> lostGpus;        // down GPUs that ran a rank
    std::vector<int> droppedReplicas; // DP indices that left the job
    std::vector<int> idleGpus;        // healthy GPUs the re-formed job leaves without a rank
    std::vector<std::pair<int, int>> spares; // (down GPU, the spare that took its rank)
};

// Re-forms `layout`'s job around the GPUs `topology` has down. Never throws.
ReformedJob reformJob(const Layout &layout, const Topology &topology);

// `layout`'s job without the data-parallel replicas `replicas` (more if EP needs it), the
// global batch kept: the elastic shrink reformJob models, for any replicas. Never throws.
ReformedJob withoutReplicas(const Layout &layout,
                            const std::vector<int> &replicas,
                            const Topology &topology);

} // namespace railyard::engine
