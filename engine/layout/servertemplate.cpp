#include "layout/servertemplate.h"

#include "base/jsoncursor.h"
#include "base/units.h"

#include <algorithm>
#include <limits>
#include <map>

namespace railyard::engine {

const char *toString(ServerDeviceKind kind)
{
    switch (kind) {
    case ServerDeviceKind::Gpu: return "gpu";
    case ServerDeviceKind::Nic: return "nic";
    case ServerDeviceKind::PcieSwitch: return "pcie-switch";
    case ServerDeviceKind::Cpu: return "cpu";
    case ServerDeviceKind::NvSwitch: return "nvswitch";
    }
    return "gpu";
}

int ServerTemplate::count(ServerDeviceKind kind) const
{
    return static_cast<int>(std::count_if(devices.begin(), devices.end(), [&](const auto &d) {
        return d.kind == kind;
    }));
}

int ServerTemplate::indexOf(const std::string &id) const
{
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].id == id)
            return static_cast<int>(i);
    return -1;
}

namespace {

// A server holds at most this many devices: 128 GPUs (the format-1 limit) with their NICs,
// switches and CPUs.
constexpr std::size_t kMaxServerDevices = 1024;
constexpr std::size_t kMaxServerLinks = 16384;

std::string what(const ServerDevice &d)
{
    static const char *names[] = {"GPU", "NIC", "PCIe switch", "CPU", "NVSwitch"};
    return std::string(names[static_cast<int>(d.kind)]) + " " + quote(d.id);
}

} // namespace

ServerTemplate readServerTemplate(const JsonCursor &c)
{
    c.requireObject();
    ServerTemplate s;
    const JsonCursor devices = c.at("devices");
    devices.requireArray();
    if (devices.size() > kMaxServerDevices)
        devices.fail("expected at most " + std::to_string(kMaxServerDevices)
                     + " devices in one server, got " + std::to_string(devices.size()));
    std::map<std::string, std::size_t> where; // id -> index, for "used twice"
    std::vector<std::string> hostPath(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const JsonCursor d = devices.at(i);
        d.requireObject();
        ServerDevice dev;
        const JsonCursor id = d.at("id");
        dev.id = id.toString();
        if (dev.id.empty() || dev.id.size() > 64)
            id.expected("a device id of 1 to 64 characters");
        if (const auto [it, fresh] = where.emplace(dev.id, i); !fresh)
            id.fail("the id " + quote(dev.id) + " is used twice (also " + devices.path() + "/"
                    + std::to_string(it->second) + "); expected unique ids");
        const std::string kind = d.at("kind").toChoice(
                {"gpu", "nic", "pcie-switch", "cpu", "nvswitch"});
        dev.kind = kind == "nic"           ? ServerDeviceKind::Nic
                   : kind == "pcie-switch" ? ServerDeviceKind::PcieSwitch
                   : kind == "cpu"         ? ServerDeviceKind::Cpu
                   : kind == "nvswitch"    ? ServerDeviceKind::NvSwitch
                                           : ServerDeviceKind::Gpu;
        dev.label = d.stringOr("label", "");
        const bool hosted = dev.kind == ServerDeviceKind::Gpu || dev.kind == ServerDeviceKind::Nic
                            || dev.kind == ServerDeviceKind::PcieSwitch;
        if (hosted) {
            if (!d.has("host"))
                d.fail(what(dev)
                       + " has no route out: expected \"host\", the id of the PCIe "
                         "switch or CPU it hangs off");
            dev.host = d.at("host").toString();
            hostPath[i] = d.at("host").path();
            if (const auto link = d.find("host_link"))
                dev.c2c = link->toChoice({"pcie", "c2c"}) == "c2c";
            dev.hostGbps = d.optDouble("host_gbps", 0.1, 1e5);
        } else {
            for (const char *key : {"host", "host_link", "host_gbps"})
                if (d.has(key))
                    d.at(key).fail("a " + kind + " has no host; expected no \"" + key + "\"");
        }
        if (dev.kind == ServerDeviceKind::Nic) {
            dev.gbps = d.optDouble("gbps", 1, 1e5);
            if (const auto gpus = d.find("gpus")) {
                gpus->requireArray();
                for (std::size_t k = 0; k < gpus->size(); ++k)
                    dev.gpus.push_back(gpus->at(k).toString());
            }
        } else {
            for (const char *key : {"gbps", "gpus"})
                if (d.has(key))
                    d.at(key).fail("only a NIC has \"" + std::string(key) + "\"");
        }
        s.devices.push_back(std::move(dev));
    }
    if (s.count(ServerDeviceKind::Gpu) == 0)
        devices.fail("expected at least one device of kind \"gpu\"");
    if (s.count(ServerDeviceKind::Gpu) > 128)
        devices.fail("expected at most 128 GPUs in one server, got "
                     + std::to_string(s.count(ServerDeviceKind::Gpu)));

    // Hosts: a PCIe switch or CPU, and every chain ends at a CPU.
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
        const ServerDevice &dev = s.devices[i];
        if (dev.host.empty() && hostPath[i].empty())
            continue;
        const JsonCursor host = devices.at(i).at("host");
        const int h = s.indexOf(dev.host);
        if (h < 0)
            host.fail("unknown device " + quote(dev.host)
                      + "; expected the id of a PCIe switch or CPU in " + devices.path());
        const ServerDeviceKind hk = s.devices[static_cast<std::size_t>(h)].kind;
        if (hk != ServerDeviceKind::PcieSwitch && hk != ServerDeviceKind::Cpu)
            host.fail(quote(dev.host) + " is a " + toString(hk) + "; expected a PCIe switch or CPU");
        if (dev.c2c && hk != ServerDeviceKind::Cpu)
            devices.at(i)
                    .at("host_link")
                    .fail("NVLink-C2C joins a GPU to a CPU; " + quote(dev.host)
                          + " is a PCIe switch");
        // Walk up: a chain that comes back on itself never reaches a CPU.
        int at = h;
        for (std::size_t steps = 0;
             s.devices[static_cast<std::size_t>(at)].kind != ServerDeviceKind::Cpu;
             ++steps) {
            if (steps > s.devices.size())
                host.fail(what(dev)
                          + " has no route out: its hosts form a loop and never reach a "
                            "CPU");
            at = s.indexOf(s.devices[static_cast<std::size_t>(at)].host);
        }
    }
    for (std::size_t i = 0; i < s.devices.size(); ++i)
        for (std::size_t k = 0; k < s.devices[i].gpus.size(); ++k) {
            const std::string &g = s.devices[i].gpus[k];
            const int j = s.indexOf(g);
            if (j < 0 || s.devices[static_cast<std::size_t>(j)].kind != ServerDeviceKind::Gpu)
                devices.at(i).at("gpus").at(k).fail(
                        (j < 0 ? "unknown device " + quote(g) : quote(g) + " is not a GPU")
                        + "; expected the id of a GPU in " + devices.path());
        }

    if (const auto links = c.find("links")) {
        links->requireArray();
        if (links->size() > kMaxServerLinks)
            links->fail("expected at most " + std::to_string(kMaxServerLinks) + " links, got "
                        + std::to_string(links->size()));
        std::map<std::pair<int, int>, std::size_t> seen;
        for (std::size_t i = 0; i < links->size(); ++i) {
            const JsonCursor l = links->at(i);
            l.requireObject();
            if (const auto kind = l.find("kind"); kind && kind->toString() != "nvlink")
                kind->expected("\"nvlink\" (PCIe is given by each device's \"host\")");
            ServerLink link;
            int ends[2] = {-1, -1};
            for (int e = 0; e < 2; ++e) {
                const JsonCursor end = l.at(e == 0 ? "a" : "b");
                const std::string id = end.toString();
                const int k = s.indexOf(id);
                if (k < 0)
                    end.fail("unknown device " + quote(id)
                             + "; expected the id of a GPU or "
                               "NVSwitch in "
                             + devices.path());
                const ServerDeviceKind kk = s.devices[static_cast<std::size_t>(k)].kind;
                if (kk != ServerDeviceKind::Gpu && kk != ServerDeviceKind::NvSwitch)
                    end.fail(quote(id) + " is a " + toString(kk)
                             + "; NVLink joins GPUs and NVSwitches");
                (e == 0 ? link.a : link.b) = id;
                ends[e] = k;
            }
            const auto kindOf = [&](int k) { return s.devices[static_cast<std::size_t>(k)].kind; };
            if (ends[0] == ends[1])
                l.fail("a link from " + quote(link.a) + " to itself; expected two devices");
            if (kindOf(ends[0]) != ServerDeviceKind::Gpu && kindOf(ends[1]) != ServerDeviceKind::Gpu)
                l.fail("NVSwitch to NVSwitch links are not modelled; expected a GPU at one end");
            const auto key = std::minmax(ends[0], ends[1]);
            if (const auto [it, fresh] = seen.emplace(key, i); !fresh)
                l.fail("a second link between " + quote(link.a) + " and " + quote(link.b)
                       + " (also " + links->path() + "/" + std::to_string(it->second)
                       + "); expected one link with \"count\" lanes");
            link.count = l.intOr("count", 1, 1, 64);
            s.links.push_back(std::move(link));
        }
    }
    return s;
}

Json serverTemplateToJson(const ServerTemplate &s)
{
    Json devices = Json::array();
    for (const ServerDevice &d : s.devices) {
        Json j = {{"id", d.id}, {"kind", toString(d.kind)}};
        if (!d.label.empty())
            j["label"] = d.label;
        if (!d.host.empty())
            j["host"] = d.host;
        if (d.c2c)
            j["host_link"] = "c2c";
        if (d.hostGbps)
            j["host_gbps"] = *d.hostGbps;
        if (d.gbps)
            j["gbps"] = *d.gbps;
        if (!d.gpus.empty())
            j["gpus"] = d.gpus;
        devices.push_back(std::move(j));
    }
    Json links = Json::array();
    for (const ServerLink &l : s.links) {
        Json j = {{"a", l.a}, {"b", l.b}, {"kind", "nvlink"}};
        j["count"] = l.count;
        links.push_back(std::move(j));
    }
    return {{"devices", devices}, {"links", links}};
}

std::vector<std::vector<int>> serverGpuNics(const ServerTemplate &s)
{
    std::vector<int> gpus, nics;
    for (std::size_t i = 0; i < s.devices.size(); ++i) {
        if (s.devices[i].kind == ServerDeviceKind::Gpu)
            gpus.push_back(static_cast<int>(i));
        else if (s.devices[i].kind == ServerDeviceKind::Nic)
            nics.push_back(static_cast<int>(i));
    }
    std::vector<std::vector<int>> out(gpus.size());
    if (nics.empty())
        return out;
    // The chain of hosts above a device, nearest first.
    const auto chain = [&](int d) {
        std::vector<int> up;
        for (int at = s.indexOf(s.devices[static_cast<std::size_t>(d)].host); at >= 0;
             at = s.indexOf(s.devices[static_cast<std::size_t>(at)].host))
            up.push_back(at);
        return up;
    };
    // nvidia-smi's scale: 0 PIX (same switch), 1 PXB (a switch above both), 2 PHB/NODE (same
    // CPU), 3 SYS (across CPUs).
    const auto distance = [&](int g, int n) {
        const std::vector<int> a = chain(g), b = chain(n);
        for (std::size_t i = 0; i < a.size(); ++i)
            for (std::size_t j = 0; j < b.size(); ++j)
                if (a[i] == b[j]) {
                    const bool cpu = s.devices[static_cast<std::size_t>(a[i])].kind
                                     == ServerDeviceKind::Cpu;
                    return cpu ? 2 : (i == 0 && j == 0 ? 0 : 1);
                }
        return 3;
    };
    std::vector<int> load(nics.size(), 0);
    // NICs that name their GPUs.
    for (std::size_t k = 0; k < nics.size(); ++k)
        for (const std::string &id : s.devices[static_cast<std::size_t>(nics[k])].gpus) {
            const auto it = std::find(gpus.begin(), gpus.end(), s.indexOf(id));
            out[static_cast<std::size_t>(it - gpus.begin())].push_back(static_cast<int>(k));
            ++load[k];
        }
    const int per = std::max<int>(1, static_cast<int>(nics.size() / gpus.size()));
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        std::vector<int> &mine = out[g];
        if (!mine.empty())
            continue;
        while (static_cast<int>(mine.size()) < std::min<int>(per, static_cast<int>(nics.size()))) {
            int best = -1;
            std::pair<int, int> bestKey{std::numeric_limits<int>::max(), 0};
            for (std::size_t k = 0; k < nics.size(); ++k) {
                if (std::find(mine.begin(), mine.end(), static_cast<int>(k)) != mine.end())
                    continue;
                const std::pair<int, int> key{distance(gpus[g], nics[k]), load[k]};
                if (key < bestKey) {
                    bestKey = key;
                    best = static_cast<int>(k);
                }
            }
            mine.push_back(best);
            ++load[static_cast<std::size_t>(best)];
        }
        std::sort(mine.begin(), mine.end());
    }
    return out;
}

} // namespace railyard::engine
