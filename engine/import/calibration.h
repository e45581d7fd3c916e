#pragma once

// An nccl-tests log against the model: the bus bandwidth the log measured at each size and what
// the engine gives for the same collective on the cluster as it is now (the Cluster panel's
// chart, and the importer's calibration of cluster.tuning.efficiency).

#include "collectives/collective.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// The collective an nccl-tests binary runs, as the engine prices it ("all_reduce",
// "alltoall", ...); nullopt for the tests it does not price (reduce, gather, scatter, ...).
std::optional<CollectiveOp> ncclTestsOp(const std::string &test);

// The modelled bus bandwidth (GB/s) of `op` at `bytes` over every GPU of `topology`; -1 when
// the engine cannot price it there.
double modelledBusbw(const Topology &topology, CollectiveOp op, double bytes);

struct CalibrationPoint
{
    double sizeBytes = 0;
    double measuredGBps = 0; // busbw, out of place
    double modelledGBps = 0; // on the cluster as it is now; -1: cannot be priced
};

struct Calibration
{
    std::string test; // "all_reduce"
    std::string file; // the log it came from
    CollectiveOp op = CollectiveOp::AllReduce;
    double sizeBytes = 0;                 // the size the efficiency was fitted at (the largest)
    double measuredGBps = 0;              // there
    double modelledBeforeGBps = 0;        // the model there before calibration (at import)
    double efficiency = 0;                // the tuning.efficiency the import set
    std::vector<CalibrationPoint> points; // by size
    // The point from 1 MiB on where the model is furthest from the log (the largest
    // |modelled / measured - 1|; below 1 MiB nccl-tests' own timing is noisy); nullptr without
    // such points.
    const CalibrationPoint *worstFrom1MiB() const;
};

// The calibration an import stored in the layout (under "imported"), with the modelled bus
// bandwidth priced again on `topology`; nullopt when the layout holds none or it is malformed
// (a hand-edited file: the chart is then not shown, nothing else depends on it).
std::optional<Calibration> calibrationOf(const Layout &layout, const Topology &topology);

} // namespace railyard::engine
