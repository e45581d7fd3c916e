#pragma once

#include "base/jsonvalue.h"
#include "import/importedmachine.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

// One step of an NCCL channel drawn on a cluster: from one device to the next device the
// channel visits (GPU to GPU, GPU to the NIC it leaves by, NIC to the next server's NIC), as
// the links between them in order from `from` to `to`.
struct GraphEdge
{
    int from = -1; // device ids
    int to = -1;
    std::vector<int> links;
};

// One channel of an NCCL graph placed on a topology: rings visit the servers in turn, leaving
// each through the channel's exit NET and entering the next through its entry NET; trees run
// down each server's chain and, between servers, from parent to child along NCCL's binary tree
// (the first of its two trees).
struct GraphChannelPath
{
    int channel = 0;
    std::vector<GraphEdge> edges;
    std::vector<int> gpus; // GPU indices in the order the channel visits them
    // Every link of every edge, in order (a link crossed twice appears twice).
    std::vector<int> links() const;
};

struct NcclGraphOverlay
{
    std::string file; // the file's name, as shown
    int graphId = 0;
    std::string pattern; // "ring", "tree", ...
    int patternCode = 0; // NCCL's number (4: ring), 0 when the file named none
    bool tree = false;   // parent -> child arrows rather than a cycle
    bool leaves = false; // the channels leave the server through NETs
    int servers = 0;     // servers the channels are drawn on
    std::vector<GraphChannelPath> channels;
    // "NCCL graph from FILE: 2 ring channels (pattern 4), 4 GPUs per server, on 1 server".
    std::string caption() const;
};

// Places `graph` (graph `graphIndex` of the file named `file`) on the topology: NCCL's GPU dev d
// is local GPU d of every server, NET k the server's k-th NIC. A graph that leaves the server
// (NETs at a channel's ends) runs over every server of the layout; one that does not is drawn
// on the first server. Links come from the topology (NVLink, through an NVSwitch or direct;
// otherwise the PCIe tree; the fabric between NICs). Throws InputError naming the file, the
// graph and the channel when the graph does not fit the layout (a GPU or NET the servers lack,
// a NET with no fabric to the next server).
NcclGraphOverlay overlayNcclGraph(const NcclGraph &graph,
                                  const Topology &topology,
                                  const std::string &file);

// The graphs an import kept under the layout's "imported" key (layoutFromImport), and the file
// they came from; empty when there are none or they do not read.
std::vector<NcclGraph> graphsFromImported(const Json &imported);

// NCCL's pattern number for a pattern name ("ring" -> 4), 0 if unknown.
int ncclPatternCode(const std::string &pattern);

} // namespace railyard::engine
