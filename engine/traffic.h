#pragma once

#include "topology.h"

#include <array>
#include <cstdint>
#include <vector>

namespace railyard::engine {

// Bytes on every link, for one phase at a time (the collectives of one dimension running at once)
// and summed over the step. The time a phase's bandwidth terms take is its busiest link's bytes
// over that link's achieved rate: the bottleneck found on the links actually crossed.
class LinkTraffic
{
public:
    explicit LinkTraffic(const Topology &topology);

    // Starts a phase. Bytes added from now on count once in the phase and `repeats` times in the
    // step totals (a TP all-gather that runs once per layer per micro-batch, say).
    void beginPhase(double repeats = 1.0);
    // How achieved rates are scaled in this phase, per link kind (an algorithm's efficiency on
    // NVLink, a protocol's share of the wire, ...). Default 1.
    void setKindScale(LinkKind kind, double scale);

    // A GPU's NVLink traffic, spread over its links to the NVSwitches by their lane counts.
    void addNvlink(int gpu, double egress, double ingress);
    // GPU <-> NIC inside a server (PCIe or C2C, then PCIe to the NIC).
    void addHostToNic(int gpu, int nic, double toNic, double fromNic);
    // A flow from one NIC to another across the fabric: the NICs' uplinks, and the spine (or
    // core) when their leaves (pods) differ. `flows`: how many queue pairs carry it (ECMP).
    void addNetwork(int srcNic, int dstNic, double bytes, double flows);
    // SHARP: a NIC's data is reduced in its leaf; the leaf sends one reduced stream up.
    void addNicToLeaf(int nic, double up, double down);
    void addLeafToSpine(int leaf, double up, double down, double flows);
    // GPU to GPU over PCIe (servers without NVLink).
    void addPciePeer(int gpuA, int gpuB, double bytes);
    // Generic: bytes on one link in the phase.
    void addLink(int link, double up, double down);

    // The phase's bandwidth time: max over the links it touched of bytes / achieved rate.
    double phaseTime();
    // The link that bounds the phase (after phaseTime()); -1 if none.
    int phaseBottleneck() const { return m_bottleneck; }
    // Links the phase touched (after phaseTime()).
    const std::vector<int> &phaseLinks() const { return m_touched; }
    double phaseUp(int link) const;
    double phaseDown(int link) const;

    // Step totals.
    const std::vector<double> &totalUp() const { return m_totalUp; }
    const std::vector<double> &totalDown() const { return m_totalDown; }
    // ECMP efficiency of a leaf's uplinks in this phase (1 with adaptive routing).
    double uplinkEfficiency(int leaf) const;

    void setAdaptiveRouting(bool on) { m_adaptive = on; }
    void setQueuePairs(int qps) { m_qps = qps; }
    int queuePairs() const { return m_qps; }

private:
    void touch(int link);
    void spreadUplinks();

    const Topology &m_t;
    std::vector<double> m_up, m_down; // phase bytes (valid where stamp matches)
    std::vector<std::uint32_t> m_stamp;
    std::vector<double> m_totalUp, m_totalDown; // step bytes
    std::vector<int> m_touched;
    std::uint32_t m_phase = 0;
    double m_repeats = 1;
    std::array<double, 5> m_kindScale{1, 1, 1, 1, 1};
    // Per-leaf bytes leaving / entering through the spine in this phase, and flow counts.
    std::vector<double> m_leafUp, m_leafDown, m_leafFlowsUp, m_leafFlowsDown;
    std::vector<std::uint32_t> m_leafStamp;
    std::vector<int> m_touchedLeaves;
    std::vector<double> m_podUp, m_podDown;
    std::vector<double> m_leafEff;
    int m_bottleneck = -1;
    bool m_spread = false; // uplinks filled for this phase
    bool m_adaptive = true;
    int m_qps = 1;
};

// Expected share of the uplink bandwidth that `flows` equal flows get when each hashes to one of
// `paths` uplinks at random (ECMP): (flows / paths) / E[max flows on one uplink].
double ecmpEfficiency(double flows, double paths);

} // namespace railyard::engine
