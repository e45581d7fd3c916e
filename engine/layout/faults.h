#pragma once

// Failures and degradation (DESIGN.md, "Failures and degradation"): what the layout's
// `cluster.faults` says is down or running below its rate. Read and written with the layout;
// resolved against the cluster's devices and links when its topology is built
// (topology/topologyfaults.cpp), where a name that matches nothing is an error.

#include "base/jsonvalue.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

enum class FaultState { Down, Degraded };
// What a fault names: a device ("leaf 3", "NIC 17.3", "GPU 12", "spine 2", "NVSwitch 0.1"),
// a link (its id in `railyard evaluate --links all --json`, or its name there), or a whole
// rail (the NICs at one position in every server and, on a rail-optimized fabric, its leaves).
enum class FaultTarget { Device, Link, Rail };

const char *toString(FaultState state);

struct Fault
{
    FaultTarget target = FaultTarget::Device;
    std::string device;        // FaultTarget::Device
    std::optional<int> linkId; // FaultTarget::Link, by id
    std::string linkName;      // FaultTarget::Link, by name ("leaf 0 — spine 1")
    int rail = -1;             // FaultTarget::Rail
    FaultState state = FaultState::Down;
    std::optional<double> rate; // degraded: the fraction of line rate left, in (0, 1]
    // A GPU that runs slow (a straggler): its kernels take `slowdown` times as long (>= 1).
    std::optional<double> slowdown;
    // A degraded bundle (an NVLink port of several links, a leaf's cables to one spine): how
    // many of its lanes are missing.
    std::optional<int> lanesDown;
    bool operator==(const Fault &) const = default;

    // "leaf 3", "link 976", "link \"leaf 0 — spine 1\"", "rail 3": what the fault names.
    std::string targetText() const;
    // "leaf 3 down", "GPU 12 runs 1.1x slower", "link 976 at 50% of its rate".
    std::string describe() const;
};

// The JSON path of fault `index` ("/cluster/faults/2"), for messages about it.
std::string faultPath(std::size_t index);

// Reads `cluster.faults` (an array). Checks what needs no topology: the keys, a state that
// agrees with rate / slowdown / lanes_down, a rate in (0, 1], a slowdown >= 1. Throws
// InputError naming the JSON path.
std::vector<Fault> readFaults(const JsonCursor &c);
Json faultsToJson(const std::vector<Fault> &faults);

} // namespace railyard::engine
