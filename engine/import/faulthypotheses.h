#pragma once

// An nccl-tests log whose bus bandwidth falls short of the model at large sizes: which
// degraded link or missing rail would explain it. Each hypothesis is a set of cluster.faults
// priced on the imported cluster (at the catalog's efficiencies, before calibration), with the
// bus bandwidth the model then gives beside the measured one.

#include "collectives/collective.h"
#include "layout/layout.h"

#include <string>
#include <utility>
#include <vector>

namespace railyard::engine {

struct FaultHypothesis
{
    std::vector<Fault> faults;
    std::string text;        // "rails 0-2 down (5 of 8 NICs per server left)"
    double sizeBytes = 0;    // the reference size (the log's largest)
    double measuredGBps = 0; // busbw there
    double modelledGBps = 0; // with the faults
    double healthyGBps = 0;  // without them
    // Over the log's points from 256 MiB on: the root mean square of log(modelled / measured)
    // (0: the hypothesis matches the large sizes exactly).
    double fit = 0;
};

struct MeasuredPoint
{
    double sizeBytes = 0;
    double busbwGBps = 0;
};

// Hypotheses for `op` measured at `points` on `layout`'s cluster (the largest point is the
// reference), closest first: the whole rails that, missing, would give the measured bus
// bandwidth; one NIC's link at the rate that would; a leaf's uplink down; an NVLink bundle
// with lanes missing. Those within 15% of the measurement at the reference size and within
// 20% on average (RMS of the log ratio) over the sizes from 256 MiB, at most `limit`; empty
// when the largest size is below 256 MiB or not short of the model by more than 10%.
std::vector<FaultHypothesis> faultHypotheses(const Layout &layout,
                                             CollectiveOp op,
                                             const std::vector<MeasuredPoint> &points,
                                             std::size_t limit = 5);

} // namespace railyard::engine
