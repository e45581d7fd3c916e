#pragma once

// Rail symmetry, for sweeps (faultsweep.h): where the rails of every server are interchangeable
// for the fabric and for the job, failing leaf k of a scalable unit costs what failing any other
// leaf of that unit costs, and failing NIC k of a server what failing any other NIC of it costs.
//
// It holds when a permutation of the GPUs inside every server (the same one in each), carrying
// each GPU's NIC, PCIe switch and leaf with it, maps the cluster and the job onto themselves, and
// such permutations take any rail to any other. railSymmetry() checks, on the built topology and
// the job's ranks, the conditions that give that group:
// - the job: training, no fault yet, no experts (EP 1), each TP group one whole server with TP
//   rank = the GPU's place in it (so every other group joins GPUs of one rail), or a whole
//   server idle;
// - each server: one NIC per GPU, under the same PCIe switch (or CPU) as its GPU; every switch
//   holds as many GPUs, every CPU as many switches, at most two CPUs; the GPUs' host links, the
//   NICs' host links, the switches' uplinks each alike; NVLink only to NVSwitches, each GPU
//   joined to the same NVSwitches by the same links, one NVLink domain per server;
// - the fabric: each server's NICs on distinct leaves of one scalable unit, NIC k of every
//   server of the unit on the same leaf; the NICs' uplinks alike; the leaves of a unit joined to
//   the same spines by the same links.
// Swapping two GPUs (and their NICs) of one switch, or two switches (and their CPUs) in every
// server then preserves every link, every group and every route the engine picks (its choices
// among equals follow the structure, and a leaf's traffic spreads over its uplinks by lanes);
// such swaps reach every rail. The prices then agree up to the order floating-point sums are
// taken in.

#include "layout/layout.h"
#include "topology/topology.h"

#include <string>

namespace railyard::engine {

struct RailSymmetry
{
    bool holds = false;
    std::string why; // when it does not hold: the first condition that fails, in words
};

RailSymmetry railSymmetry(const Layout &layout, const Topology &topology);

} // namespace railyard::engine
