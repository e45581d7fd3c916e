#pragma once

#include "layout/layout.h"
#include "topology/topology.h"

#include <string>

namespace railyard::engine {

// The parallel sizes a workload starts from on a cluster it was not planned for (File > New
// Cluster). Megatron's rule of thumb: tensor parallelism inside the NVLink domain first, the
// smallest TP whose memory fits; if no TP fits on its own, the largest TP in the domain and then
// the smallest pipeline parallelism that fits (and, for MoE models, the smallest expert
// parallelism). Data parallelism fills the rest of the cluster. Memory is the evaluation's
// estimate of the most loaded GPU against its HBM.
struct DefaultPlan
{
    ParallelConfig parallel; // DP left to follow from the GPU count
    // The layout's global batch, raised to the next multiple of DP x micro batch when the DP
    // replicas do not split it (a new cluster usually has more replicas than the old one).
    int globalBatch = 0;
    bool fits = false;    // the step can be priced and every GPU's memory is within HBM
    double memoryGiB = 0; // per GPU, the most loaded pipeline stage
    double hbmGiB = 0;
    int evaluated = 0;  // configurations priced to find it
    std::string reason; // when !fits: why nothing fits, for people
};

// `layout` gives the cluster, the model and the training settings; its parallel sizes and
// mapping are ignored. `topology` is the layout's cluster, built. Without a model every size is 1
// and DP fills the cluster. When nothing fits, the plan with the least memory per GPU, with
// `fits` false and the reason.
DefaultPlan defaultPlan(const Layout &layout, const Topology &topology);

// `layout` with the plan's sizes and global batch, and the order's mapping.
Layout withPlan(const Layout &layout, const DefaultPlan &plan);

} // namespace railyard::engine
