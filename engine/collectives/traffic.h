#pragma once

#include "collectives/trafficpattern.h"
#include "topology/topology.h"

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace railyard::engine {

// What the traffic reads of each link in its inner loop, taken from one topology: the achieved
// rate, and for a leaf's uplink to the spine its leaf (whose ECMP efficiency scales it).
// Shared by the LinkTraffics of one evaluation (see EvaluationWorkspace).
struct LinkRates
{
    struct Entry
    {
        float rate = 0;      // achieved bytes/s
        int uplinkLeaf = -1; // leaf index for leaf -> spine links, else -1
        bool nvlink = false; // an NVLink link (a phase's NVLink stage, not its network stage)
    };
    std::vector<Entry> links;
    std::uint64_t source = 0; // the buildId() of the topology they were read from
    void fill(const Topology &topology);
};

// Bytes on every link, for one phase at a time (the collectives of one dimension running at once)
// and summed over the step. The time a phase's bandwidth terms take is its busiest link's bytes
// over that link's achieved rate: the bottleneck found on the links actually crossed.
class LinkTraffic
{
public:
    LinkTraffic() = default; // bound to nothing: bind() before use
    explicit LinkTraffic(const Topology &topology);
    LinkTraffic(const LinkTraffic &) = delete; // may point at its own rates
    LinkTraffic &operator=(const LinkTraffic &) = delete;
    // Points the buffers at `topology` for a new evaluation: re-reads its link rates, uplinks
    // and routing, forgets the step totals, and reallocates only when the sizes differ. The
    // result is the same as a new LinkTraffic(topology). The topology must outlive its use.
    void bind(const Topology &topology);
    // The same with rates already filled from `topology` (kept by the caller while in use).
    void bind(const Topology &topology, const LinkRates &rates);

    // Starts a phase. Bytes added from now on count once in the phase and `repeats` times in the
    // step totals (a TP all-gather that runs once per layer per micro-batch, say).
    void beginPhase(double repeats = 1.0);
    // How achieved rates are scaled in this phase, per link kind (an algorithm's efficiency on
    // NVLink, a protocol's share of the wire, ...). Default 1.
    void setKindScale(LinkKind kind, double scale);

    // A GPU's NVLink traffic. It is kept per GPU (the GPU's NVLink port) and spread over the
    // GPU's links to the NVSwitches by their lane counts only when link totals are read.
    // On a direct NVLink mesh (no NVSwitch) the bytes go straight onto the GPU's links to the
    // peers set by setNvlinkPeers (default: all its links).
    void addNvlink(int gpu, double egress, double ingress);
    // Direct meshes: the GPUs of its server (bit k: local GPU k) a GPU's NVLink traffic goes
    // to, for the group being added. No effect with NVSwitches.
    void setNvlinkPeers(int gpu, std::uint64_t localMask);
    // GPU <-> NIC inside a server (PCIe or C2C, then PCIe to the NIC).
    void addHostToNic(int gpu, int nic, double toNic, double fromNic);
    // A flow from one NIC to another across the fabric: the NICs' uplinks, and the spine (or
    // core) when their leaves (pods) differ. `flows`: how many queue pairs carry it (ECMP).
    void addNetwork(int srcNic, int dstNic, double bytes, double flows);
    // SHARP: a NIC's data is reduced in its leaf; the leaf sends one reduced stream up.
    void addNicToLeaf(int nic, double up, double down);
    void addLeafToSpine(int leaf, double up, double down, double flows);
    // Three-tier fabrics: bytes leaving (up) and entering (down) a pod through the core,
    // spread over its spines' core uplinks. podOfLeaf() is -1 on fabrics without a core.
    void addPodToCore(int pod, double up, double down);
    int podOfLeaf(int leaf) const;
    // GPU to GPU over PCIe (servers without NVLink).
    void addPciePeer(int gpuA, int gpuB, double bytes);
    // Generic: bytes on one link in the phase.
    void addLink(int link, double up, double down)
    {
        if (link >= 0)
            addLinkUnchecked(link, up, down);
    }

    // The phase's bandwidth time: max over the links it touched of bytes / achieved rate.
    double phaseTime();
    // The phase's time on NVLink ports alone and on every other link alone (after
    // phaseTime()): the two stages of a hierarchical collective.
    double phaseNvlinkTime() const { return m_nvlinkTime; }
    double phaseOtherTime() const { return m_otherTime; }
    // The same two times over part of the topology (after phaseTime()): the NVLink ports of
    // GPUs [0, gpus) and the links whose `links` entry is set.
    void phaseTimesWithin(const std::vector<std::uint8_t> &links,
                          int gpus,
                          double &nvlinkS,
                          double &otherS) const;
    // The same two times read over some of the phase's NVLink ports (GPUs) and links alone
    // (after phaseTime()): what the phase costs collectives that cross only those, while every
    // byte of the phase loads them. Ports and links the phase did not touch count 0.
    void phaseTimesOver(std::span<const int> ports,
                        std::span<const int> links,
                        double &nvlinkS,
                        double &otherS) const;
    // The NVLink ports (GPUs) and the other links the phase touched (after phaseTime()).
    const std::vector<int> &phasePorts() const { return m_touchedPorts; }
    const std::vector<int> &phaseTouchedLinks() const { return m_touched; }
    // The link that bounds the phase (after phaseTime()); -1 if none.
    int phaseBottleneck() const { return m_bottleneck; }
    // Links the phase touched (after phaseTime()), NVLinks included; at most `limit`.
    std::vector<int> phaseLinks(std::size_t limit = std::numeric_limits<std::size_t>::max()) const;
    // The phase's bytes per link (after phaseTime()), NVLink ports spread over their GPU's
    // NVLinks by lanes, appended to `out`: unsorted, a link may appear more than once.
    void phaseBytes(std::vector<LinkShare> &out) const;
    // The phase's bytes on `link` one way (an NVLink's share of its GPU's port by lanes).
    double phaseUp(int link) const { return phaseOn(link, &Cell::up); }
    double phaseDown(int link) const { return phaseOn(link, &Cell::down); }
    // Adds the current phase's bytes `factor` more times to the step totals (another
    // collective with the same traffic pattern, e.g. a reduce-scatter after an all-gather).
    void repeatPhase(double factor);

    // Step totals per link (NVLinks spread from their ports) into `up` and `down` (resized).
    void totals(std::vector<float> &up, std::vector<float> &down);
    // Per link, its share of the busiest phase it took part in: 1 for the link that bounds
    // a phase (saturated while the phase's bandwidth terms run).
    void peaks(std::vector<float> &peak) const;
    // ECMP efficiency of a leaf's uplinks in this phase (1 with adaptive routing).
    double uplinkEfficiency(int leaf) const;

    // Off: phases are only timed, their bytes kept from the step totals and the peaks (scratch
    // traffic that prices a collective, or a step priced for its numbers alone): repeatPhase()
    // adds nothing. On by default.
    void keepStepTotals(bool on) { m_keepTotals = on; }

    void setAdaptiveRouting(bool on) { m_adaptive = on; }
    void setQueuePairs(int qps) { m_qps = qps; }
    int queuePairs() const { return m_qps; }

private:
    // Floats: bytes need 7 significant digits here, and halving the footprint keeps a
    // million-link cluster's phase in cache far better.
    struct Cell // one link (or NVLink port) in the current phase
    {
        float up = 0;
        float down = 0;
        std::uint32_t stamp = 0;
    };
    struct Total
    {
        float up = 0;
        float down = 0;
    };

    // Adds to a link's (or NVLink port's) cell, clearing it first if this phase has not
    // touched it yet; the phase's stamp saves clearing every cell between phases.
    void addToCell(Cell &c, int id, std::vector<int> &touched, double up, double down)
    {
        if (c.stamp != m_phase) {
            c.stamp = m_phase;
            c.up = 0;
            c.down = 0;
            touched.push_back(id);
        }
        c.up += static_cast<float>(up);
        c.down += static_cast<float>(down);
    }
    void addLinkUnchecked(int link, double up, double down)
    {
        addToCell(m_cells[static_cast<std::size_t>(link)], link, m_touched, up, down);
    }
    // phaseTimesWithin's and phaseTimesOver's maxima: the ports and links given that pass
    // the filters and that this phase touched.
    template<class PortOk, class LinkOk>
    void phaseMaxima(std::span<const int> ports,
                     std::span<const int> links,
                     PortOk portOk,
                     LinkOk linkOk,
                     double &nvlinkS,
                     double &otherS) const;
    double phaseOn(int link, float Cell::*direction) const;
    // Adds the phase's bytes, times its repeats, to the step totals (once, at its end).
    void commitPhase();
    void spreadUplinks();

    const Topology *m_t = nullptr;
    std::vector<Cell> m_cells;
    std::vector<Total> m_totals;
    LinkRates m_ownRates;               // when bound without shared rates
    const LinkRates *m_rates = nullptr; // m_ownRates or the caller's
    std::vector<int> m_touched;
    std::vector<Cell> m_ports; // NVLink ports, per GPU
    std::vector<Total> m_portTotals;
    std::vector<float> m_peak, m_portPeak; // busiest share of a phase, per link / port
    std::vector<int> m_touchedPorts;
    std::uint32_t m_phase = 0;
    double m_repeats = 1;
    std::array<double, 5> m_kindScale{1, 1, 1, 1, 1};
    // Per-leaf bytes leaving / entering through the spine in this phase, and flow counts.
    struct LeafCell
    {
        double up = 0, down = 0, flowsUp = 0, flowsDown = 0;
        std::uint32_t stamp = 0;
    };
    std::vector<LeafCell> m_leaves;
    std::vector<int> m_touchedLeaves;
    std::vector<double> m_podUp, m_podDown;
    std::vector<double> m_leafEff;
    int m_bottleneck = -1;
    double m_nvlinkTime = 0, m_otherTime = 0;
    bool m_spread = false;    // uplinks filled for this phase
    bool m_committed = false; // phase added to the totals
    bool m_keepTotals = true;
    bool m_adaptive = true;
    int m_qps = 1;
    bool m_direct = false;              // the topology's NVLinks run GPU to GPU
    std::vector<std::uint64_t> m_peers; // direct meshes: per GPU, its group's local members
};

// Expected share of the uplink bandwidth that `flows` equal flows get when each hashes to one of
// `paths` uplinks at random (ECMP): (flows / paths) / E[max flows on one uplink].
double ecmpEfficiency(double flows, double paths);

} // namespace railyard::engine
