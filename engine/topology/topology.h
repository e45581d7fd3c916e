#pragma once

#include "layout/catalog.h"
#include "layout/layout.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace railyard::engine {

enum class DeviceKind : std::uint8_t { Gpu, NvSwitch, PcieSwitch, Cpu, Nic, Leaf, Spine, Core };
enum class LinkKind : std::uint8_t { NvLink, Pcie, Ib, Ethernet, C2C };
constexpr int kDeviceKinds = 8; // DeviceKind's values
constexpr int kLinkKinds = 5;   // LinkKind's values

const char *toString(DeviceKind kind);
const char *toString(LinkKind kind);

struct Device
{
    DeviceKind kind = DeviceKind::Gpu;
    int index = 0; // among the devices of its kind: GPU 1234, leaf 3
    int node = -1; // server or tray; -1 for devices outside servers
    int local = 0; // index inside its node (GPU 3 of node 17), or inside its group
    int rack = -1;
    int domain = -1; // NVLink domain
    int rail = -1;   // NIC rail; leaf's rail
    int group = -1;  // leaf: scalable unit; spine: pod (three-tier)
};

// A physical connection. Traffic is tracked per direction: "up" is a -> b, "down" b -> a, where
// a is the device nearer the GPUs.
struct Link
{
    int a = 0;
    int b = 0;
    LinkKind kind = LinkKind::NvLink;
    double gbPerS = 0;     // per direction, line rate (all lanes together)
    double efficiency = 1; // achieved fraction of the line rate
    double latencyUs = 0;
    double lanes = 1; // physical links or cables bundled here
    // The fraction of the line rate a fault leaves (cluster.faults): 1 healthy, 0 down.
    double health = 1;
    double effectiveGbPerS() const { return gbPerS * efficiency * health; }
    // The lanes that still carry traffic: what parallel links (a GPU's NVLinks, a leaf's
    // uplinks) share their bytes by.
    double workingLanes() const { return lanes * health; }
    bool down() const { return health <= 0; }
};

// How a GPU's network traffic reaches its NIC: straight down its own PCIe (or C2C) link; up
// through the server's PCIe tree to a NIC under another switch or CPU; or over NVLink to a
// GPU beside the NIC and through that GPU's PCIe link (NCCL's PXN).
enum class NetPath : std::uint8_t { Direct, PcieTree, Pxn };

// One entry of cluster.faults as it lands on this topology: the devices and links it takes
// down or slows, and the GPUs it touches.
struct ResolvedFault
{
    Fault fault;
    std::size_t index = 0;    // in cluster.faults
    std::vector<int> devices; // devices it names (a rail: its NICs and leaves)
    std::vector<int> links;   // links it takes down or degrades (a device's: all of them)
    std::vector<int> gpus;    // GPUs it takes out or slows
};

// The fixed shape of a generated cluster, so the cost engine can find paths by arithmetic
// instead of searching the graph.
struct ClusterShape
{
    int nodes = 0;
    int gpusPerNode = 0;
    int domainSize = 0; // GPUs per NVLink domain
    int nodesPerDomain = 1;
    int nicsPerNode = 0;
    int nicsPerGpu = 0; // NICs each GPU owns (1 when GPUs share NICs)
    int gpusPerNic = 0; // GPUs sharing one NIC (1 on HGX H100)
    int serversPerRack = 0;
    int racks = 0;
    bool pcieOnly = false; // no NVLink: GPUs talk over PCIe inside a server
    // Built from the layout's explicit server (format 2) rather than generated.
    bool explicitServer = false;
    // NVLinks run GPU to GPU (a direct mesh: DGX-1's hybrid cube mesh, 4-GPU NV4 boards), with
    // no NVSwitch; a pair may have none.
    bool directNvlink = false;
    FabricKind fabric = FabricKind::RailOptimized;
    bool hasFabric = false;
    int rails = 0;             // leaves per scalable unit (rail-optimized)
    int nodesPerLeafGroup = 0; // servers in one scalable unit (rail-optimized)
    int leafGroups = 0;
    int nicsPerLeaf = 0; // three-tier: NICs under each leaf
    int leaves = 0;
    int spines = 0;
    int cores = 0;
    int leavesPerPod = 0; // three-tier
    int spinesPerPod = 0;
    bool sharp = false;
    double oversubscription = 1;
    // The layout's NCCL tuning, which the cost engine reads with the topology.
    bool nvlsEnabled = true;
    int qpsPerConnection = 1;
    bool adaptiveRouting = true;
    int gpuCount() const { return nodes * gpusPerNode; }
    int domainCount() const { return domainSize > 0 ? gpuCount() / domainSize : 0; }
};

class Topology
{
public:
    const std::vector<Device> &devices() const { return m_devices; }
    const std::vector<Link> &links() const { return m_links; }
    const ClusterShape &shape() const { return m_shape; }
    const GpuSpec &gpuSpec() const { return m_gpu; }
    const NicModel &nicModel() const { return m_nic; }
    const SwitchModel &switchModel() const { return m_switch; }
    // Unique to one buildTopology() call, shared by its copies (a topology never changes after
    // it is built): what was derived from a topology with this id holds for this one. 0 for a
    // default-constructed topology.
    std::uint64_t buildId() const { return m_buildId; }

    int gpuCount() const { return m_shape.gpuCount(); }
    int deviceCount() const { return static_cast<int>(m_devices.size()); }
    int linkCount() const { return static_cast<int>(m_links.size()); }
    // What a link joins, as one number: (the kind of its a end x kDeviceKinds + the kind of
    // its b end) x kLinkKinds + its own kind. What summaries that visit every link read (the
    // report's tiers), two bytes a link where the Link and its devices are 56 and 64.
    int linkEnds(int link) const { return m_linkEnds[static_cast<std::size_t>(link)]; }
    int countOf(DeviceKind kind) const;
    int linkCountOf(LinkKind kind) const; // O(1): counted when the topology is built

    // Device ids by role (O(1)).
    int gpuDevice(int gpu) const { return m_firstGpu + gpu; }
    int nodeOfGpu(int gpu) const { return gpu / m_shape.gpusPerNode; }
    int domainOfGpu(int gpu) const { return gpu / m_shape.domainSize; }
    int localOfGpu(int gpu) const { return gpu % m_shape.gpusPerNode; }
    int rackOfNode(int node) const;

    // Link ids by role.
    // To each NVSwitch of its domain, or (direct meshes) to each GPU it is linked with.
    std::span<const int> gpuNvlinks(int gpu) const;
    int gpuHostLink(int gpu) const;                        // to its PCIe switch, or C2C to its CPU
    std::span<const int> gpuNics(int gpu) const;           // NIC device ids nearest this GPU
    int nicHostLink(int nicIndex) const;                   // NIC to PCIe switch or CPU
    int nicUplink(int nicIndex) const;                     // NIC to its leaf; -1 without a fabric
    int leafOfNic(int nicIndex) const;                     // leaf index; -1 without a fabric
    std::span<const int> leafUplinks(int leafIndex) const; // leaf -> spine links
    std::span<const int> spineUplinks(int spineIndex) const; // spine -> core (three-tier)
    int nicDevice(int nicIndex) const { return m_firstNic + nicIndex; }
    int leafDevice(int leafIndex) const { return m_firstLeaf + leafIndex; }
    int spineDevice(int spineIndex) const { return m_firstSpine + spineIndex; }

    // Achieved rates (GB/s per direction) the cost engine reads in its inner loops.
    double gpuNvlinkRate(int gpu) const { return m_gpuNvRate[static_cast<std::size_t>(gpu)]; }
    // What a GPU moves to another GPU of its domain: NVLink, or PCIe without NVLink.
    double gpuIntraRate(int gpu) const { return m_gpuIntraRate[static_cast<std::size_t>(gpu)]; }
    // What a GPU can push into the fabric through its NICs (shared NICs split), capped by its
    // host link.
    double gpuNetRate(int gpu) const { return m_gpuNetRate[static_cast<std::size_t>(gpu)]; }
    double nicRate(int nicIndex) const { return m_nicRate[static_cast<std::size_t>(nicIndex)]; }
    // The NVLink domain a GPU talks inside without NICs (the server, for PCIe-only servers).
    int localDomainOfGpu(int gpu) const { return m_gpuLocalDomain[static_cast<std::size_t>(gpu)]; }
    int localDomainCount() const
    {
        return m_shape.pcieOnly ? m_shape.nodes : m_shape.domainCount();
    }
    int nicCount() const { return static_cast<int>(m_nicRate.size()); }

    std::span<const int> linksOf(int device) const; // every link touching `device`
    int otherEnd(int link, int device) const;
    // The link from a device up to its PCIe switch or CPU (GPU, NIC, PCIe switch); -1 for CPUs
    // and devices outside servers.
    int hostLink(int device) const
    {
        return m_hostLink.empty() ? -1 : m_hostLink[static_cast<std::size_t>(device)];
    }
    // The direct NVLink between two GPUs (direct meshes), or -1.
    int nvlinkBetween(int gpuA, int gpuB) const;
    // Direct meshes: whether the GPUs of one server given by `localMask` (bit k: local GPU k)
    // can form a ring over NVLink alone, as NCCL searches for one. True for one GPU.
    bool nvlinkRing(std::uint64_t localMask) const;

    // Faults (cluster.faults), resolved when the topology is built (topologyfaults.cpp). Down
    // links stay in links() (ids do not move, loads compare link by link with the healthy
    // cluster) with health 0, and routing leaves them out.
    bool hasFaults() const { return !m_faults.empty(); }
    const std::vector<ResolvedFault> &faults() const { return m_faults; }
    bool deviceDown(int device) const
    {
        return !m_deviceDown.empty() && m_deviceDown[static_cast<std::size_t>(device)] != 0;
    }
    // A straggler's slowdown (1: healthy) and GPUs that are out.
    double gpuSlowdown(int gpu) const
    {
        return m_gpuSlowdown.empty() ? 1.0 : m_gpuSlowdown[static_cast<std::size_t>(gpu)];
    }
    bool hasStragglers() const { return !m_gpuSlowdown.empty(); }
    bool gpuDown(int gpu) const
    {
        return !m_gpuDown.empty() && m_gpuDown[static_cast<std::size_t>(gpu)] != 0;
    }
    int downGpuCount() const { return m_downGpus; }
    // The GPU whose PCIe (or C2C) link carries `gpu`'s network traffic: itself, or with PXN the
    // GPU it forwards to over NVLink.
    int gpuNetProxy(int gpu) const
    {
        return m_gpuNetProxy.empty() ? gpu : m_gpuNetProxy[static_cast<std::size_t>(gpu)];
    }
    NetPath gpuNetPath(int gpu) const
    {
        return m_gpuNetPath.empty() ? NetPath::Direct : m_gpuNetPath[static_cast<std::size_t>(gpu)];
    }
    // Faults moved some GPU's traffic to another NIC than its own (which it may then share).
    bool nicsReassigned() const { return !m_gpuNetPath.empty(); }
    // What the faults changed in the routing, in words ("GPU 3 reaches NIC 0.2 over PCIe").
    const std::vector<std::string> &faultNotes() const { return m_faultNotes; }
    // The same cluster with `faults` applied: `healthy` must have none. Throws InputError
    // (naming the fault's JSON path) as buildTopology does.
    friend Topology withFaults(const Topology &healthy, const std::vector<Fault> &faults);
    // Makes this topology, a copy of `healthy` (which has no faults), `healthy` with `faults`
    // applied, undoing the faults it had without copying the whole topology again: what a sweep
    // does for each candidate. A new buildId(). Throws as withFaults does (the topology is then
    // to be refaulted again before use).
    void refault(const Topology &healthy, const std::vector<Fault> &faults);

    // "GPU 1234", "NVSwitch 17.2", "NIC 17.3", "leaf 3", "spine 2", "node 17", "rack 4".
    std::string deviceName(int device) const;
    std::string linkName(int link) const;
    // Finds a device (or a server or rack by its first GPU) by what the user typed:
    // "GPU 1234", "gpu1234", "node 17", "leaf 3". Returns -1 if nothing matches.
    int findDevice(const std::string &query) const;

private:
    friend Topology buildTopology(const ClusterConfig &, const Catalog &);
    friend class TopologyBuilder;
    void finish();
    void computeRates();
    void fillRingTable();
    // topologyfaults.cpp
    void applyFaults(const std::vector<Fault> &faults);
    void assignNics(const std::vector<std::size_t> &cause);
    void checkRoutable(const std::vector<std::size_t> &linkCause);

    std::vector<Device> m_devices;
    std::vector<Link> m_links;
    ClusterShape m_shape;
    GpuSpec m_gpu;
    NicModel m_nic;
    SwitchModel m_switch;
    std::uint64_t m_buildId = 0;
    int m_firstGpu = 0, m_firstNic = 0, m_firstLeaf = 0, m_firstSpine = 0, m_firstCore = 0;
    std::vector<int> m_countByKind;
    std::vector<int> m_linkCountByKind;
    std::vector<std::uint16_t> m_linkEnds; // linkEnds()
    std::vector<double> m_gpuNvRate, m_gpuNetRate, m_nicRate, m_gpuIntraRate;
    std::vector<int> m_gpuLocalDomain;
    // Role tables (see the accessors above).
    std::vector<int> m_gpuNvlinks; // gpuCount x nvlinksPerGpu, or by m_gpuNvStart
    int m_nvlinksPerGpu = 0;
    std::vector<int> m_gpuNvStart; // explicit servers: GPU g's NVLinks from [g] to [g + 1]
    std::vector<int> m_gpuHostLink;
    std::vector<int> m_gpuNics;            // gpuCount x nicsPerGpu, or by m_gpuNicStart
    std::vector<int> m_gpuNicStart;        // explicit servers: GPU g's NICs from [g] to [g + 1]
    std::vector<int> m_hostLink;           // per device: the link to its host (-1: none)
    std::vector<std::uint8_t> m_localRing; // direct meshes: nvlinkRing() per local mask
    std::vector<int> m_nicHostLink, m_nicUplink, m_nicLeaf;
    std::vector<int> m_leafUplinks; // leaves x spinesPerLeaf
    int m_uplinksPerLeaf = 0;
    std::vector<int> m_spineUplinks;
    int m_uplinksPerSpine = 0;
    // Adjacency in compressed rows.
    std::vector<int> m_adjStart, m_adj;
    // Faults (empty when there are none).
    std::vector<ResolvedFault> m_faults;
    std::vector<std::uint8_t> m_deviceDown;
    std::vector<double> m_gpuSlowdown;
    std::vector<std::uint8_t> m_gpuDown;
    int m_downGpus = 0;
    std::vector<int> m_gpuNetProxy;
    std::vector<NetPath> m_gpuNetPath;
    std::vector<std::string> m_faultNotes;
    std::vector<int> m_changedLinks; // links whose health a fault set (refault undoes them)
};

Topology withFaults(const Topology &healthy, const std::vector<Fault> &faults);

// Builds the device/link graph for a cluster: 8-GPU HGX/DGX servers, NVL72 racks (NVLink domain
// larger than a server), PCIe-only servers (NVLink domain of 1); fabrics rail-optimized,
// single-switch or three-tier. Throws InputError for settings the catalog cannot satisfy.
Topology buildTopology(const ClusterConfig &cluster, const Catalog &catalog);

} // namespace railyard::engine
