#include "import/faulthypotheses.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace railyard::engine {

namespace {

// The sizes whose bus bandwidth a link's rate decides (NCCL's latency is a few percent of them).
constexpr double kLargeBytes = 256.0 * 1024 * 1024;
// The root mean square of log(modelled / measured) over the large sizes above which a
// hypothesis does not explain the log: about 20% off on average.
constexpr double kWorstFit = 0.2;

Fault device(const std::string &name, std::optional<double> rate = std::nullopt)
{
    Fault f;
    f.device = name;
    if (rate) {
        f.state = FaultState::Degraded;
        f.rate = rate;
    }
    return f;
}

struct Pricer
{
    const Topology &healthy;
    CollectiveOp op;
    // The busbw of `op` over every GPU at `bytes` with `faults`; -1 when it cannot be priced
    // (the faults leave the traffic no way).
    double busbw(const std::vector<Fault> &faults, double bytes) const
    {
        try {
            const Topology t = withFaults(healthy, faults);
            CollectiveRequest r;
            r.op = op;
            r.bytes = bytes;
            return estimateCollective(t, r).busbwGBps;
        } catch (const InputError &) {
            return -1;
        }
    }
};

} // namespace

std::vector<FaultHypothesis> faultHypotheses(const Layout &layout,
                                             CollectiveOp op,
                                             const std::vector<MeasuredPoint> &points,
                                             std::size_t limit)
{
    std::vector<FaultHypothesis> out;
    if (points.empty())
        return out;
    const MeasuredPoint ref = *std::max_element(points.begin(),
                                                points.end(),
                                                [](const MeasuredPoint &a, const MeasuredPoint &b) {
                                                    return a.sizeBytes < b.sizeBytes;
                                                });
    Layout healthyLayout = layout;
    healthyLayout.cluster.faults.clear();
    std::optional<Topology> healthy;
    try {
        healthy = buildTopology(healthyLayout.cluster, Catalog::builtin());
    } catch (const InputError &) {
        return out;
    }
    const Pricer price{*healthy, op};
    // Large sizes only: below them latency, not a link's bandwidth, sets the bus bandwidth.
    if (ref.sizeBytes < kLargeBytes)
        return out;
    const double base = price.busbw({}, ref.sizeBytes);
    if (base <= 0 || ref.busbwGBps <= 0 || ref.busbwGBps > 0.9 * base)
        return out;

    const ClusterShape &s = healthy->shape();
    std::vector<std::pair<std::vector<Fault>, std::string>> candidates;
    if (s.nodes > 1 && s.nicsPerNode > 1) {
        // Whole rails missing: the first k NIC positions of every server.
        for (int k = 1; k < s.nicsPerNode; ++k) {
            std::vector<Fault> f;
            for (int r = 0; r < k; ++r) {
                Fault rail;
                rail.target = FaultTarget::Rail;
                rail.rail = r;
                f.push_back(rail);
            }
            candidates.emplace_back(f,
                                    (k == 1 ? "rail 0 down"
                                            : "rails 0-" + std::to_string(k - 1) + " down")
                                            + " (" + std::to_string(s.nicsPerNode - k) + " of "
                                            + std::to_string(s.nicsPerNode)
                                            + " NICs per server left)");
        }
    }
    if (s.nodes > 1 && s.nicsPerNode > 0) {
        // One NIC's link at the rate that gives the measured bandwidth (bisection: the model's
        // busbw grows with it), and one NIC down.
        const std::string nic = healthy->deviceName(healthy->nicDevice(0));
        double lo = 0.01, hi = 1.0;
        if (price.busbw({device(nic, lo)}, ref.sizeBytes) < ref.busbwGBps) {
            for (int k = 0; k < 24; ++k) {
                const double mid = 0.5 * (lo + hi);
                (price.busbw({device(nic, mid)}, ref.sizeBytes) < ref.busbwGBps ? lo : hi) = mid;
            }
            const double rate = std::round(hi * 1000) / 1000;
            candidates.emplace_back(std::vector<Fault>{device(nic, rate)},
                                    nic + " (or its cable) at " + formatNumber(100 * rate, 3)
                                            + "% of its rate");
        }
        candidates.emplace_back(std::vector<Fault>{device(nic)},
                                nic + " down (its GPU through a neighbour's NIC)");
    }
    if (s.spines > 0) {
        Fault f;
        f.target = FaultTarget::Link;
        f.linkId = healthy->leafUplinks(0).empty() ? -1 : healthy->leafUplinks(0)[0];
        if (*f.linkId >= 0)
            candidates.emplace_back(std::vector<Fault>{f}, healthy->linkName(*f.linkId) + " down");
    }
    if (!s.pcieOnly && !healthy->gpuNvlinks(0).empty()) {
        // NVLink lanes missing on GPU 0's first bundle, and a whole NVSwitch down.
        const int link = healthy->gpuNvlinks(0)[0];
        const int lanes = static_cast<int>(healthy->links()[static_cast<std::size_t>(link)].lanes);
        for (int k = 1; k < lanes; ++k) {
            Fault f;
            f.target = FaultTarget::Link;
            f.linkId = link;
            f.state = FaultState::Degraded;
            f.lanesDown = k;
            candidates.emplace_back(std::vector<Fault>{f},
                                    healthy->linkName(link) + " with " + std::to_string(k) + " of "
                                            + std::to_string(lanes) + " NVLink lanes missing");
        }
        if (!s.directNvlink && healthy->countOf(DeviceKind::NvSwitch) > 1) {
            const int sw = healthy->otherEnd(link, healthy->gpuDevice(0));
            candidates.emplace_back(std::vector<Fault>{device(healthy->deviceName(sw))},
                                    healthy->deviceName(sw) + " down");
        }
    }

    for (auto &[faults, text] : candidates) {
        FaultHypothesis h;
        h.faults = faults;
        h.text = text;
        h.sizeBytes = ref.sizeBytes;
        h.measuredGBps = ref.busbwGBps;
        h.healthyGBps = base;
        h.modelledGBps = price.busbw(faults, ref.sizeBytes);
        if (h.modelledGBps <= 0 || std::abs(h.modelledGBps / ref.busbwGBps - 1) > 0.15)
            continue;
        double sum = 0;
        int n = 0;
        for (const MeasuredPoint &p : points) {
            if (p.sizeBytes < kLargeBytes || p.busbwGBps <= 0)
                continue;
            const double m = p.sizeBytes == ref.sizeBytes ? h.modelledGBps
                                                          : price.busbw(faults, p.sizeBytes);
            if (m <= 0)
                continue;
            sum += std::pow(std::log(m / p.busbwGBps), 2);
            ++n;
        }
        h.fit = n > 0 ? std::sqrt(sum / n) : std::abs(std::log(h.modelledGBps / ref.busbwGBps));
        // A fault that matches the largest size but not the others does not explain the log
        // (a virtual machine's overheads, say, fall off differently with size).
        if (h.fit > kWorstFit)
            continue;
        out.push_back(std::move(h));
    }
    std::stable_sort(out.begin(), out.end(), [](const FaultHypothesis &a, const FaultHypothesis &b) {
        return a.fit < b.fit;
    });
    if (out.size() > limit)
        out.resize(limit);
    return out;
}

} // namespace railyard::engine
