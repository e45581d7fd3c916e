#pragma once

#include "base/jsonvalue.h"

#include <map>
#include <string>
#include <vector>

namespace railyard::engine {

// What an importer found in a cluster's own file, before it becomes a layout: the devices and
// links of one server (or the hosts of an nccl-tests run), and the measurements.
struct ImportedGpu
{
    std::string label;        // "GPU3", or the PCI bus id in NCCL XML
    std::string busId;        // "0000:18:00.0" when the file gives one
    std::string model;        // "NVIDIA H100 80GB HBM3", "0x10de:0x2330", or empty
    std::string host;         // host name (nccl-tests) or empty
    std::string cpuAffinity;  // "0-47,96-143", "N/A" or empty
    std::string numaAffinity; // "0", "0,3-9,11-17", "N/A" or empty
    int numa = -1;            // NUMA node (XML numaid, or the single number of numaAffinity)
    int sm = 0;               // compute capability x 10 (XML)
    int nvlinks = 0;          // NVLink lanes: into the switch fabric, or summed over direct peers
    int pcieSwitch = -1;      // NCCL XML: the top PCIe switch above it (numbered in the file)
    int line = 0;             // where the file describes it: its topo -m row, its XML <gpu>
};

struct ImportedNic
{
    std::string label; // "NIC0", "mlx5_0", or the <net> name
    std::string name;  // the IB device or netdev ("mlx5_3", "rdmap79s0", "eth0")
    std::string busId;
    double gbitPerS = 0; // 0: unknown
    int numa = -1;
    int nearestGpu = -1;     // the GPU it is closest to on PCIe (-1: none nearer than SYS)
    std::string nearestPath; // that GPU's relation: "PIX", "PXB", "PHB", "NODE"
    int pcieSwitch = -1;     // NCCL XML: the top PCIe switch above it (numbered in the file)
};

// One link between devices. Endpoints are device numbers: GPUs first (0..gpus-1), then NICs
// (gpus..gpus+nics-1); -1 stands for a switch or CPU the file does not list as a device.
struct ImportedLink
{
    int a = 0;
    int b = 0;
    std::string kind; // "nvlink", "pix", "pxb", "phb", "node", "sys", "soc", "pcie", "c2c"
    int count = 1;    // NVLink lanes bundled
    int line = 0;     // where the file says it (topo -m: the upper-triangle cell; XML: <nvlink>)
    int column = 0;   // topo -m: the cell's column (characters, from 1); 0: not known
};

// One row half of an nccl-tests table.
struct Measurement
{
    std::string op; // all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv
    double sizeBytes = 0;
    double count = 0;
    std::string type;
    std::string redop;
    int root = -1;
    bool inPlace = false;
    double timeUs = 0;
    double algbwGBps = 0;
    double busbwGBps = 0;
    int line = 0;
};

// One NCCL_GRAPH_DUMP_FILE graph: a search result (rings, trees), kept for an overlay.
struct NcclChannel
{
    std::vector<int> gpus; // CUDA device indices in order
    std::vector<int> nets; // net devices at the ends
};
struct NcclGraph
{
    int id = 0;
    std::string pattern; // "ring", "tree", "split-tree", "balanced-tree", "nvls", or the number
    int crossNic = 0;
    double speedIntra = 0; // GB/s per channel
    double speedInter = 0;
    std::string typeIntra, typeInter;
    std::vector<NcclChannel> channels;
};

struct ImportedMachine
{
    std::string format; // "nvidia-smi-topo", "nccl-topo-xml", "nccl-graph-xml", "nccl-tests"
    std::string file;
    std::vector<std::string> hosts; // nccl-tests: one per host, in rank order
    std::vector<ImportedGpu> gpus;  // of every host
    std::vector<ImportedNic> nics;  // of one host
    std::vector<ImportedLink> links;
    int nvswitches = 0;          // NVSwitches the file shows
    int pcieSwitches = 0;        // PCIe switches (XML bridges with devices below)
    int numaNodes = 0;           // distinct NUMA nodes / CPUs
    bool nvlinkSwitched = false; // GPUs reach each other through an NVSwitch fabric
    std::string collective;      // nccl-tests: the op of the run
    int ranks = 0;
    std::vector<Measurement> measurements;
    std::vector<NcclGraph> graphs;
    std::vector<std::string> notes; // what the file lacked or what was odd in it

    int gpusPerHost() const
    {
        return hosts.empty() ? static_cast<int>(gpus.size())
                             : static_cast<int>(gpus.size() / hosts.size());
    }
    // Links counted by kind (NVLink pairs; PCIe relations by code).
    std::map<std::string, int> linkCounts() const;
    // NVLink lanes summed over every link.
    int nvlinkLanes() const;
    // The largest-size out-of-place measurement (nullptr without measurements).
    const Measurement *largest() const;
};

// The import summary the CLI prints with --json: format, gpus, nics, links by kind,
// measurements and notes.
Json importSummary(const ImportedMachine &machine);

} // namespace railyard::engine
