#include "collectives/collective.h"
#include "collectives/collective_p.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "collectives/traffic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

// What a collective's group is on the topology (GroupShape): how many NVLink domains and GPUs
// per domain it spans, the rates of its NVLink, NIC and fabric stages, direct NVLink meshes.
// The collective planner (collective.cpp) prices from it.

namespace railyard::engine {

using detail::archIndex;

GroupShape analyzeGroup(const Topology &t, const std::vector<int> &gpus)
{
    GroupShape g;
    analyzeGroup(t, gpus, g);
    return g;
}

namespace {

// A direct NVLink mesh: NCCL rings a server's members over NVLink when their links allow a
// ring, else it falls back to PCIe for the group. What a member moves inside its server is the
// NVLink it has to the other members (or its PCIe link).
void directMeshRates(const Topology &t, GroupShape &g)
{
    double intra = std::numeric_limits<double>::infinity();
    for (int d = 0; d < g.domains; ++d) {
        std::uint64_t mask = 0;
        for (int k = 0; k < g.members(d); ++k)
            mask |= std::uint64_t(1) << std::min(63, t.localOfGpu(g.member(d, k)));
        if (!t.nvlinkRing(mask))
            g.pcieOnly = true;
    }
    for (int d = 0; d < g.domains; ++d)
        for (int k = 0; k < g.members(d); ++k) {
            const int gpu = g.member(d, k);
            double rate = 0;
            if (!g.pcieOnly)
                for (int j = 0; j < g.members(d); ++j)
                    if (const int l = t.nvlinkBetween(gpu, g.member(d, j)); l >= 0)
                        rate += t.links()[static_cast<std::size_t>(l)].effectiveGbPerS();
            if (g.pcieOnly || g.members(d) < 2)
                rate = t.links()[static_cast<std::size_t>(t.gpuHostLink(gpu))].effectiveGbPerS();
            intra = std::min(intra, rate);
        }
    g.intraGBps = intra;
}

} // namespace

void analyzeGroup(const Topology &t, std::span<const int> gpus, GroupShape &g)
{
    // Scratch per thread, sized to the topology: a domain's slot in this group, stamped so
    // nothing needs clearing between groups.
    thread_local std::vector<int> slotOf, stampOf, nicStamp;
    thread_local int stamp = 0;
    const ClusterShape &s = t.shape();
    const std::size_t domainCount = static_cast<std::size_t>(t.localDomainCount());
    if (slotOf.size() < domainCount) {
        slotOf.assign(domainCount, 0);
        stampOf.assign(domainCount, 0);
    }
    if (++stamp == std::numeric_limits<int>::max()) {
        std::fill(stampOf.begin(), stampOf.end(), 0);
        stamp = 1;
    }
    g.n = static_cast<int>(gpus.size());
    g.pcieOnly = s.pcieOnly;
    g.architecture = t.gpuSpec().architecture;
    g.domains = 0;
    g.domainStart.clear();
    // Count members per domain in order of first appearance.
    thread_local std::vector<int> counts;
    counts.clear();
    for (int gpu : gpus) {
        const std::size_t d = static_cast<std::size_t>(t.localDomainOfGpu(gpu));
        if (stampOf[d] != stamp) {
            stampOf[d] = stamp;
            slotOf[d] = g.domains++;
            counts.push_back(0);
        }
        ++counts[static_cast<std::size_t>(slotOf[d])];
    }
    g.domainStart.resize(static_cast<std::size_t>(g.domains) + 1);
    g.domainStart[0] = 0;
    g.ppn = 0;
    g.ppnMin = g.n;
    for (int d = 0; d < g.domains; ++d) {
        const int c = counts[static_cast<std::size_t>(d)];
        g.domainStart[static_cast<std::size_t>(d) + 1] = g.domainStart[static_cast<std::size_t>(d)]
                                                         + c;
        g.ppn = std::max(g.ppn, c);
        g.ppnMin = std::min(g.ppnMin, c);
    }
    // Place members by domain, keeping rank order inside each.
    g.gpus.resize(gpus.size());
    thread_local std::vector<int> fill;
    fill.assign(g.domainStart.begin(), g.domainStart.end() - 1);
    for (int gpu : gpus) {
        const std::size_t d = static_cast<std::size_t>(t.localDomainOfGpu(gpu));
        g.gpus[static_cast<std::size_t>(fill[static_cast<std::size_t>(slotOf[d])]++)] = gpu;
    }
    // Rates: what a GPU moves inside its domain; what each domain can send into the fabric.
    g.intraGBps = std::numeric_limits<double>::infinity();
    g.netPerDomainGBps = std::numeric_limits<double>::infinity();
    g.nicsPerDomain = std::numeric_limits<int>::max();
    // GPUs share NICs by design, or because faults moved some onto a neighbour's NIC.
    const bool shared = s.gpusPerNic > 1 || t.nicsReassigned();
    if (shared && nicStamp.size() < static_cast<std::size_t>(t.nicCount()))
        nicStamp.assign(static_cast<std::size_t>(t.nicCount()), 0);
    for (int d = 0; d < g.domains; ++d) {
        double net = 0;
        int nics = 0;
        for (int k = 0; k < g.members(d); ++k) {
            const int gpu = g.member(d, k);
            g.intraGBps = std::min(g.intraGBps, t.gpuIntraRate(gpu));
            if (!shared) {
                net += t.gpuNetRate(gpu);
                nics += static_cast<int>(t.gpuNics(gpu).size());
                continue;
            }
            // GPUs that share a NIC share its bandwidth: count each NIC once.
            for (int nic : t.gpuNics(gpu)) {
                const int i = nic - t.nicDevice(0);
                if (nicStamp[static_cast<std::size_t>(i)] != stamp) {
                    nicStamp[static_cast<std::size_t>(i)] = stamp;
                    net += t.nicRate(i);
                    ++nics;
                }
            }
        }
        g.netPerDomainGBps = std::min(g.netPerDomainGBps, net);
        g.nicsPerDomain = std::min(g.nicsPerDomain, nics);
    }
    if (s.directNvlink)
        directMeshRates(t, g);
    if (g.domains == 0) {
        g.intraGBps = 0;
        g.netPerDomainGBps = 0;
        g.nicsPerDomain = 0;
    }
    // NCCL doubles the channels per NIC when one channel could not fill it (topo.h rule:
    // Hopper and later from 50 GB/s per channel, earlier from 25).
    const double perNic = g.nicsPerDomain > 0 ? g.netPerDomainGBps / g.nicsPerDomain : 0;
    const int arch = archIndex(g.architecture);
    g.channelsPerNic = perNic >= (arch >= 2 ? 50.0 : 25.0) ? 2 : 1;
    g.nvls = t.gpuSpec().nvls && s.nvlsEnabled && !g.pcieOnly && g.ppn >= 2;
    g.netMessageUs = g.domains > 1 ? t.nicModel().messageUs : 0.0;
    g.sharp = s.sharp && g.domains > 1;
}

} // namespace railyard::engine
