#pragma once

#include "base/jsonvalue.h"

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// Layout format 2: the devices and links of one server, written out (what an importer found,
// or a hand-drawn board), instead of the generated HGX/PCIe shape. Every server of the cluster
// has these devices; the fabric above them is generated as in format 1.
enum class ServerDeviceKind { Gpu, Nic, PcieSwitch, Cpu, NvSwitch };
const char *toString(ServerDeviceKind kind);

struct ServerDevice
{
    std::string id; // unique in the server: "gpu0", "nic3", "pex1", "cpu0"
    ServerDeviceKind kind = ServerDeviceKind::Gpu;
    std::string label; // shown on the canvas ("mlx5_0"); empty: the id
    // GPU, NIC and PCIe switch: the PCIe switch or CPU above it (its route out of the board).
    std::string host;
    bool c2c = false;               // the link to the host is NVLink-C2C (Grace), not PCIe
    std::optional<double> hostGbps; // GB/s per direction of that link; absent: the catalog's
    std::optional<double> gbps;     // NIC: line rate in Gb/s; absent: cluster.nic.gbps
    // NIC: the GPUs whose traffic it carries; empty: the GPUs nearest it on PCIe.
    std::vector<std::string> gpus;
    bool operator==(const ServerDevice &) const = default;
};

// An NVLink bundle: GPU to GPU (a direct mesh, NV# in nvidia-smi topo -m) or GPU to NVSwitch.
struct ServerLink
{
    std::string a;
    std::string b;
    int count = 1; // NVLink lanes
    bool operator==(const ServerLink &) const = default;
};

struct ServerTemplate
{
    std::vector<ServerDevice> devices;
    std::vector<ServerLink> links;

    int count(ServerDeviceKind kind) const;
    int indexOf(const std::string &id) const; // -1 if absent
    bool operator==(const ServerTemplate &) const = default;
};

// Reads /cluster/server (format 2). Checks ids (unique, every link and host names a device),
// kinds (NVLink joins a GPU to a GPU or an NVSwitch; a host is a PCIe switch or CPU), that
// every GPU and NIC has a route out (a host chain ending at a CPU, no cycles), and that there
// is at least one GPU. Throws InputError naming the file and JSON path.
ServerTemplate readServerTemplate(const JsonCursor &cursor);
Json serverTemplateToJson(const ServerTemplate &server);

// For each GPU (in template order) the NICs (template NIC order) that carry its traffic: the
// NICs that list it, else the nearest ones on the PCIe tree (same switch, then same CPU, then
// any), shared as evenly as the tree allows.
std::vector<std::vector<int>> serverGpuNics(const ServerTemplate &server);

} // namespace railyard::engine
