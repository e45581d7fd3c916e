#include "import/calibration.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

std::optional<CollectiveOp> ncclTestsOp(const std::string &test)
{
    if (test == "alltoall")
        return CollectiveOp::AllToAll;
    if (test == "reduce" || test == "gather" || test == "scatter" || test == "hypercube")
        return std::nullopt;
    return collectiveOpFromString(test);
}

double modelledBusbw(const Topology &topology, CollectiveOp op, double bytes)
{
    try {
        CollectiveRequest r;
        r.op = op;
        r.bytes = bytes;
        return estimateCollective(topology, r).busbwGBps;
    } catch (const InputError &) {
        return -1;
    }
}

const CalibrationPoint *Calibration::worstFrom1MiB() const
{
    const CalibrationPoint *worst = nullptr;
    double gap = -1;
    for (const CalibrationPoint &p : points)
        if (p.sizeBytes >= 1024.0 * 1024.0 && p.measuredGBps > 0 && p.modelledGBps > 0)
            if (const double g = std::abs(p.modelledGBps / p.measuredGBps - 1); g > gap) {
                gap = g;
                worst = &p;
            }
    return worst;
}

namespace {

double number(const Json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_number() && std::isfinite(it->get<double>()) ? it->get<double>()
                                                                                : -1;
}

} // namespace

std::optional<Calibration> calibrationOf(const Layout &layout, const Topology &topology)
{
    const Json &o = layout.original.get();
    if (!o.is_object() || !o.contains("imported") || !o["imported"].is_object())
        return std::nullopt;
    const Json &imported = o["imported"];
    if (!imported.contains("calibration") || !imported["calibration"].is_object())
        return std::nullopt;
    const Json &c = imported["calibration"];
    Calibration cal;
    if (!c.contains("op") || !c["op"].is_string())
        return std::nullopt;
    cal.test = c["op"].get<std::string>();
    const auto op = ncclTestsOp(cal.test);
    if (!op)
        return std::nullopt;
    cal.op = *op;
    if (imported.contains("file") && imported["file"].is_string())
        cal.file = imported["file"].get<std::string>();
    cal.sizeBytes = number(c, "size_bytes");
    cal.measuredGBps = number(c, "measured_busbw_gbps");
    cal.modelledBeforeGBps = number(c, "modelled_busbw_gbps_before");
    cal.efficiency = number(c, "efficiency");
    if (c.contains("points") && c["points"].is_array())
        for (const Json &p : c["points"]) {
            if (!p.is_object())
                continue;
            CalibrationPoint point;
            point.sizeBytes = number(p, "size_bytes");
            point.measuredGBps = number(p, "measured_busbw_gbps");
            // Sizes past a petabyte are not a log's: leave them out rather than price them.
            if (point.sizeBytes <= 0 || point.sizeBytes > 1e15 || point.measuredGBps < 0)
                continue;
            point.modelledGBps = modelledBusbw(topology, cal.op, point.sizeBytes);
            cal.points.push_back(point);
        }
    if (cal.points.empty())
        return std::nullopt;
    std::sort(cal.points.begin(), cal.points.end(), [](const auto &a, const auto &b) {
        return a.sizeBytes < b.sizeBytes;
    });
    return cal;
}

} // namespace railyard::engine
