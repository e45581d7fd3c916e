// Faults on a built topology (cluster.faults; DESIGN.md, "Failures and degradation"): each
// fault resolved to the devices and links it names, down links kept in place with health 0,
// degraded ones at their rate, and the GPUs whose NICs are gone given another way out, as
// NCCL would find one: a working NIC under the same PCIe switch (or CPU), else over NVLink to
// the GPU beside a working NIC (PXN), else up the server's PCIe tree. What cannot be routed is
// an InputError naming the fault's JSON path.
#include "topology/topologybuilder_p.h"

#include "base/inputerror.h"
#include "base/units.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace railyard::engine {

namespace {

constexpr std::size_t kNoCause = std::numeric_limits<std::size_t>::max();

[[noreturn]] void fail(std::size_t fault, const std::string &key, const std::string &message)
{
    throw InputError("", faultPath(fault) + (key.empty() ? "" : "/" + key), message);
}

// "GPU 0-127, NVSwitch 0.0-15.3, ...": the names a fault may use, for an error message.
std::string deviceNamesText(const Topology &t)
{
    std::string out;
    const auto &devices = t.devices();
    std::size_t i = 0;
    while (i < devices.size()) {
        std::size_t j = i;
        while (j + 1 < devices.size() && devices[j + 1].kind == devices[i].kind)
            ++j;
        const std::string first = t.deviceName(static_cast<int>(i));
        const std::string last = t.deviceName(static_cast<int>(j));
        // "GPU 0" .. "GPU 127" -> "GPU 0-127"; "NIC 0.0" .. "NIC 15.7" -> "NIC 0.0-15.7".
        std::size_t common = 0;
        while (common < first.size() && common < last.size() && first[common] == last[common]
               && !std::isdigit(static_cast<unsigned char>(first[common])))
            ++common;
        out += (out.empty() ? "" : ", ") + first
               + (i == j ? std::string() : "-" + last.substr(common));
        i = j + 1;
    }
    return out;
}

// "A — B" (as evaluate --links all names links), also with " - " or " -- " between.
bool splitLinkName(const std::string &name, std::string &a, std::string &b)
{
    for (const char *sep : {" \xE2\x80\x94 ", " -- ", " - "}) {
        const auto at = name.find(sep);
        if (at != std::string::npos) {
            a = name.substr(0, at);
            b = name.substr(at + std::string_view(sep).size());
            return true;
        }
    }
    return false;
}

// "node 17", "server 17", "tray 17": a whole server's GPUs (-1: not such a name).
int serverOf(const std::string &name, int nodes)
{
    std::string word, digits;
    for (char c : name) {
        if (std::isspace(static_cast<unsigned char>(c)))
            continue;
        if (std::isdigit(static_cast<unsigned char>(c)))
            digits += c;
        else if (digits.empty())
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else
            return -1;
    }
    if ((word != "node" && word != "server" && word != "tray") || digits.empty()
        || digits.size() > 9)
        return -1;
    const int n = std::stoi(digits);
    return n < nodes ? n : -2;
}

bool isRackName(const std::string &name)
{
    std::string word;
    for (char c : name) {
        if (std::isdigit(static_cast<unsigned char>(c)))
            break;
        if (!std::isspace(static_cast<unsigned char>(c)))
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return word == "rack";
}

} // namespace

Topology withFaults(const Topology &healthy, const std::vector<Fault> &faults)
{
    Topology t = healthy;
    if (!faults.empty())
        t.applyFaults(faults);
    t.m_buildId = nextTopologyBuildId();
    return t;
}

void Topology::refault(const Topology &healthy, const std::vector<Fault> &faults)
{
    for (int l : m_changedLinks)
        m_links[static_cast<std::size_t>(l)].health = healthy.m_links[static_cast<std::size_t>(l)]
                                                              .health;
    m_changedLinks.clear();
    m_gpuNics = healthy.m_gpuNics;
    m_gpuNvRate = healthy.m_gpuNvRate;
    m_gpuNetRate = healthy.m_gpuNetRate;
    m_nicRate = healthy.m_nicRate;
    m_gpuIntraRate = healthy.m_gpuIntraRate;
    m_faults.clear();
    m_deviceDown.clear();
    m_gpuSlowdown.clear();
    m_gpuDown.clear();
    m_downGpus = 0;
    m_gpuNetProxy.clear();
    m_gpuNetPath.clear();
    m_faultNotes.clear();
    m_buildId = nextTopologyBuildId();
    if (!faults.empty())
        applyFaults(faults);
}

void Topology::applyFaults(const std::vector<Fault> &faults)
{
    const std::size_t deviceCount = m_devices.size();
    const int gpus = gpuCount();
    m_faults.clear();
    m_faultNotes.clear();
    m_deviceDown.assign(deviceCount, 0);
    m_gpuSlowdown.assign(static_cast<std::size_t>(gpus), 1.0);
    m_gpuDown.assign(static_cast<std::size_t>(gpus), 0);
    std::vector<std::size_t> linkCause(m_links.size(), kNoCause);
    std::vector<std::size_t> gpuCause(static_cast<std::size_t>(gpus), kNoCause);

    for (std::size_t i = 0; i < faults.size(); ++i) {
        const Fault &f = faults[i];
        ResolvedFault rf;
        rf.fault = f;
        rf.index = i;
        const double health = f.state == FaultState::Down ? 0.0 : f.rate.value_or(1.0);
        const auto setLink = [&](int l, double h) {
            Link &k = m_links[static_cast<std::size_t>(l)];
            if (h < k.health) {
                if (k.health == 1)
                    m_changedLinks.push_back(l);
                k.health = h;
                linkCause[static_cast<std::size_t>(l)] = i;
            }
            rf.links.push_back(l);
        };
        const auto setDevice = [&](int dev) {
            if (health <= 0)
                m_deviceDown[static_cast<std::size_t>(dev)] = 1;
            rf.devices.push_back(dev);
            for (int l : linksOf(dev))
                setLink(l, health);
        };
        const auto setGpu = [&](int gpu) {
            rf.gpus.push_back(gpu);
            rf.devices.push_back(gpuDevice(gpu));
            if (f.state == FaultState::Down) {
                m_gpuDown[static_cast<std::size_t>(gpu)] = 1;
                m_deviceDown[static_cast<std::size_t>(gpuDevice(gpu))] = 1;
                gpuCause[static_cast<std::size_t>(gpu)] = i;
            } else if (f.slowdown) {
                double &s = m_gpuSlowdown[static_cast<std::size_t>(gpu)];
                s = std::max(s, *f.slowdown);
            } else {
                fail(i,
                     f.rate ? "rate" : "lanes_down",
                     "a GPU runs slow rather than at a rate: give its \"slowdown\" (1.1: its "
                     "kernels take 10% longer), or degrade one of its links");
            }
        };
        switch (f.target) {
        case FaultTarget::Device: {
            if (isRackName(f.device))
                fail(i,
                     "device",
                     "a rack is not one device: name its servers (\"node 4\") one by one");
            if (const int node = serverOf(f.device, m_shape.nodes); node != -1) {
                if (node < 0)
                    fail(i,
                         "device",
                         "no " + quote(f.device) + ": this cluster has servers 0-"
                                 + std::to_string(m_shape.nodes - 1));
                for (int k = 0; k < m_shape.gpusPerNode; ++k)
                    setGpu(node * m_shape.gpusPerNode + k);
                break;
            }
            const int dev = findDevice(f.device);
            if (dev < 0)
                fail(i,
                     "device",
                     "no device " + quote(f.device) + " in this cluster (it has "
                             + deviceNamesText(*this) + ")");
            const Device &d = m_devices[static_cast<std::size_t>(dev)];
            if (d.kind == DeviceKind::Gpu) {
                setGpu(d.index);
                break;
            }
            if (f.slowdown)
                fail(i, "slowdown", "a slowdown is a GPU's; " + deviceName(dev) + " is not one");
            if (f.lanesDown)
                fail(i,
                     "lanes_down",
                     "lanes_down is for a link that bundles lanes (an NVLink port, a leaf's "
                     "cables to one spine); name the link");
            if (d.kind == DeviceKind::Cpu)
                fail(i,
                     "device",
                     deviceName(dev) + " down takes its server with it: write {\"device\": \"node "
                             + std::to_string(d.node) + "\", \"state\": \"down\"}");
            if (m_shape.directNvlink && d.kind == DeviceKind::NvSwitch)
                fail(i, "device", "this server has no NVSwitch");
            setDevice(dev);
            break;
        }
        case FaultTarget::Link: {
            int link = -1;
            if (f.linkId) {
                if (*f.linkId >= linkCount())
                    fail(i,
                         "link",
                         "no link " + std::to_string(*f.linkId) + ": this cluster has links 0-"
                                 + std::to_string(linkCount() - 1)
                                 + " (ids as railyard evaluate --links all --json prints them)");
                link = *f.linkId;
            } else {
                std::string a, b;
                if (!splitLinkName(f.linkName, a, b))
                    fail(i,
                         "link",
                         "expected a link's id or its name as evaluate --links all prints it "
                         "(\"leaf 0 \xE2\x80\x94 spine 1\"), got "
                                 + quote(f.linkName));
                const int da = findDevice(a), db = findDevice(b);
                if (da < 0 || db < 0)
                    fail(i,
                         "link",
                         "no device " + quote(da < 0 ? a : b) + " in this cluster (it has "
                                 + deviceNamesText(*this) + ")");
                for (int l : linksOf(da))
                    if (otherEnd(l, da) == db) {
                        link = l;
                        break;
                    }
                if (link < 0)
                    fail(i, "link", "no link between " + deviceName(da) + " and " + deviceName(db));
            }
            const Link &k = m_links[static_cast<std::size_t>(link)];
            double h = health;
            if (f.lanesDown) {
                if (*f.lanesDown >= k.lanes)
                    fail(i,
                         "lanes_down",
                         linkName(link) + " bundles " + formatNumber(k.lanes)
                                 + " lanes: lanes_down must be fewer (with none left, write "
                                   "\"state\": \"down\")");
                h = 1.0 - *f.lanesDown / k.lanes;
            }
            if (m_shape.directNvlink && k.kind == LinkKind::NvLink && h <= 0)
                fail(i,
                     "state",
                     "an NVLink down on a direct mesh changes which rings NCCL can build, which "
                     "this model does not re-derive: degrade it (\"rate\") or take a GPU down");
            setLink(link, h);
            break;
        }
        case FaultTarget::Rail: {
            if (f.rail >= m_shape.nicsPerNode)
                fail(i,
                     "rail",
                     "no rail " + std::to_string(f.rail) + ": servers have "
                             + std::to_string(m_shape.nicsPerNode) + " NIC"
                             + (m_shape.nicsPerNode == 1 ? "" : "s") + " (rails 0-"
                             + std::to_string(std::max(0, m_shape.nicsPerNode - 1)) + ")");
            if (f.slowdown || f.lanesDown)
                fail(i, "rail", "a rail is down or runs at a rate");
            for (int n = 0; n < m_shape.nodes; ++n)
                setDevice(nicDevice(n * m_shape.nicsPerNode + f.rail));
            if (m_shape.fabric == FabricKind::RailOptimized)
                for (int l = 0; l < countOf(DeviceKind::Leaf); ++l)
                    if (m_devices[static_cast<std::size_t>(leafDevice(l))].rail == f.rail)
                        setDevice(leafDevice(l));
            break;
        }
        }
        std::sort(rf.links.begin(), rf.links.end());
        rf.links.erase(std::unique(rf.links.begin(), rf.links.end()), rf.links.end());
        m_faults.push_back(std::move(rf));
    }

    m_downGpus = static_cast<int>(std::count(m_gpuDown.begin(), m_gpuDown.end(), 1));
    if (m_downGpus == gpus)
        fail(gpuCause[0], "", "every GPU of the cluster is down: there is no job left to price");
    // A GPU whose every NVLink is down has no way into its domain that this model routes.
    if (!m_shape.pcieOnly)
        for (int g = 0; g < gpus; ++g) {
            if (gpuDown(g) || gpuNvlinks(g).empty() || m_shape.domainSize < 2)
                continue;
            double lanes = 0;
            std::size_t cause = kNoCause;
            for (int l : gpuNvlinks(g)) {
                lanes += m_links[static_cast<std::size_t>(l)].workingLanes();
                cause = std::min(cause, linkCause[static_cast<std::size_t>(l)]);
            }
            if (lanes <= 0)
                fail(cause,
                     "",
                     "every NVLink of GPU " + std::to_string(g)
                             + " is down: NCCL would fall back to PCIe, which this model does "
                               "not route for it; take the GPU down instead ({\"device\": \"GPU "
                             + std::to_string(g) + "\", \"state\": \"down\"})");
        }
    if (std::none_of(m_gpuSlowdown.begin(), m_gpuSlowdown.end(), [](double s) { return s > 1; }))
        m_gpuSlowdown.clear();
    if (m_downGpus == 0)
        m_gpuDown.clear();
    computeRates(); // NVLink rates after the faults, which assignNics reads
    assignNics(linkCause);
    computeRates();
    checkRoutable(linkCause);
}

void Topology::assignNics(const std::vector<std::size_t> &linkCause)
{
    const int perNode = m_shape.nicsPerNode;
    const int gpus = gpuCount();
    if (perNode == 0 || m_nicHostLink.empty())
        return;
    const auto health = [&](int l) {
        return l < 0 ? 1.0 : m_links[static_cast<std::size_t>(l)].health;
    };
    const auto works = [&](int nic) {
        return !deviceDown(nicDevice(nic)) && health(nicHostLink(nic)) > 0
               && health(nicUplink(nic)) > 0;
    };
    const auto hostOf = [&](int device, int link) { return otherEnd(link, device); };
    bool needed = false;
    for (int n = 0; n < nicCount() && !needed; ++n)
        needed = !works(n);
    for (int g = 0; g < gpus && !needed; ++g)
        needed = health(gpuHostLink(g)) <= 0;
    if (!needed)
        return;

    // GPUs on each NIC now (the healthy assignment), and who sits beside each NIC.
    std::vector<int> users(static_cast<std::size_t>(nicCount()), 0);
    for (int g = 0; g < gpus; ++g)
        if (!gpuDown(g))
            for (int nic : gpuNics(g))
                if (works(nic - m_firstNic))
                    ++users[static_cast<std::size_t>(nic - m_firstNic)];
    m_gpuNetProxy.resize(static_cast<std::size_t>(gpus));
    for (int g = 0; g < gpus; ++g)
        m_gpuNetProxy[static_cast<std::size_t>(g)] = g;
    m_gpuNetPath.assign(static_cast<std::size_t>(gpus), NetPath::Direct);
    // Writable slots of a GPU's NICs (gpuNics() is a view of these).
    const auto slots = [&](int g) -> std::pair<std::size_t, std::size_t> {
        if (!m_gpuNicStart.empty())
            return {static_cast<std::size_t>(m_gpuNicStart[static_cast<std::size_t>(g)]),
                    static_cast<std::size_t>(m_gpuNicStart[static_cast<std::size_t>(g) + 1])};
        const std::size_t n = static_cast<std::size_t>(m_shape.nicsPerGpu);
        return {static_cast<std::size_t>(g) * n, static_cast<std::size_t>(g + 1) * n};
    };
    std::size_t notes = 0, more = 0;
    const auto note = [&](const std::string &text) {
        if (notes++ < 12)
            m_faultNotes.push_back(text);
        else
            ++more;
    };
    const auto causeOf = [&](int g) {
        std::size_t cause = linkCause[static_cast<std::size_t>(gpuHostLink(g))];
        for (int nic : gpuNics(g)) {
            const int n = nic - m_firstNic;
            cause = std::min({cause,
                              linkCause[static_cast<std::size_t>(nicHostLink(n))],
                              nicUplink(n) >= 0 ? linkCause[static_cast<std::size_t>(nicUplink(n))]
                                                : kNoCause});
        }
        return cause == kNoCause ? std::size_t(0) : cause;
    };

    // Two passes, as NCCL's search prefers what is nearest: GPUs with a working NIC under their
    // own PCIe switch or CPU take it first; those that must go through another GPU (PXN) or up
    // the PCIe tree then take the least used of what is left.
    std::vector<std::uint8_t> placed(static_cast<std::size_t>(gpus), 0);
    for (int pass = 0; pass < 2; ++pass)
        for (int g = 0; g < gpus; ++g) {
            if (gpuDown(g) || placed[static_cast<std::size_t>(g)])
                continue;
            const auto [begin, end] = slots(g);
            const bool hostOk = health(gpuHostLink(g)) > 0;
            std::vector<int> working;
            for (std::size_t s = begin; s < end; ++s)
                if (works(m_gpuNics[s] - m_firstNic))
                    working.push_back(m_gpuNics[s]);
            if (!working.empty() && hostOk) {
                // Some of its NICs are left: its flows spread over those.
                std::size_t k = 0;
                for (std::size_t s = begin; s < end; ++s)
                    if (!works(m_gpuNics[s] - m_firstNic)) {
                        m_gpuNics[s] = working[k++ % working.size()];
                        ++users[static_cast<std::size_t>(m_gpuNics[s] - m_firstNic)];
                    }
                placed[static_cast<std::size_t>(g)] = 1;
                continue;
            }
            const int node = nodeOfGpu(g);
            const int myHost = hostOf(gpuDevice(g), gpuHostLink(g));
            const bool nvlink = !m_shape.pcieOnly && m_gpuNvRate[static_cast<std::size_t>(g)] > 0;
            // The GPU beside a NIC (under its PCIe switch or CPU) that can forward to it: the
            // NIC's own GPU if it can, else the first other.
            const auto besideNic = [&](int nic) {
                const int host = hostOf(nicDevice(nic), nicHostLink(nic));
                int first = -1;
                for (int k = 0; k < m_shape.gpusPerNode; ++k) {
                    const int p = node * m_shape.gpusPerNode + k;
                    if (p == g || gpuDown(p) || health(gpuHostLink(p)) <= 0
                        || hostOf(gpuDevice(p), gpuHostLink(p)) != host
                        || localDomainOfGpu(p) != localDomainOfGpu(g))
                        continue;
                    const auto own = gpuNics(p);
                    if (std::find(own.begin(), own.end(), nicDevice(nic)) != own.end())
                        return p;
                    if (first < 0)
                        first = p;
                }
                return first;
            };
            int chosen = -1, proxy = g;
            NetPath path = NetPath::Direct;
            const auto consider = [&](int nic, NetPath how, int via) {
                if (chosen < 0
                    || users[static_cast<std::size_t>(nic)]
                               < users[static_cast<std::size_t>(chosen)]) {
                    chosen = nic;
                    path = how;
                    proxy = via;
                }
            };
            if (!working.empty()) {
                // Its NICs work but its own PCIe link is down: over NVLink to the GPU beside them.
                if (nvlink)
                    for (int nic : working)
                        if (const int p = besideNic(nic - m_firstNic); p >= 0)
                            consider(nic - m_firstNic, NetPath::Pxn, p);
            } else {
                const int first = node * perNode;
                if (hostOk) // a NIC under its own PCIe switch or CPU: plain GPUDirect RDMA
                    for (int n = first; n < first + perNode; ++n)
                        if (works(n) && hostOf(nicDevice(n), nicHostLink(n)) == myHost)
                            consider(n, NetPath::Direct, g);
                if (chosen < 0 && pass == 0)
                    continue;             // placed in the second pass
                if (chosen < 0 && nvlink) // PXN: over NVLink to the GPU beside a working NIC
                    for (int n = first; n < first + perNode; ++n)
                        if (works(n))
                            if (const int p = besideNic(n); p >= 0)
                                consider(n, NetPath::Pxn, p);
                if (chosen < 0 && hostOk) // up the PCIe tree, across the CPUs if need be
                    for (int n = first; n < first + perNode; ++n)
                        if (works(n))
                            consider(n, NetPath::PcieTree, g);
            }
            if (chosen < 0)
                fail(causeOf(g),
                     "",
                     "GPU " + std::to_string(g) + " (server " + std::to_string(node)
                             + ") has no working NIC it can reach"
                             + (hostOk ? std::string(": every NIC of its server is down")
                                       : std::string(": its PCIe link is down and no GPU beside a "
                                                     "working NIC can forward for it"))
                             + "; its traffic to other servers cannot be routed");
            for (std::size_t s = begin; s < end; ++s)
                m_gpuNics[s] = nicDevice(chosen);
            ++users[static_cast<std::size_t>(chosen)];
            placed[static_cast<std::size_t>(g)] = 1;
            m_gpuNetProxy[static_cast<std::size_t>(g)] = proxy;
            m_gpuNetPath[static_cast<std::size_t>(g)] = path;
            const std::string nicName = deviceName(nicDevice(chosen));
            switch (path) {
            case NetPath::Direct:
                note("GPU " + std::to_string(g) + " reaches " + nicName
                     + " over PCIe (its own NIC is down)");
                break;
            case NetPath::Pxn:
                note("GPU " + std::to_string(g) + " reaches " + nicName
                     + " over NVLink through GPU " + std::to_string(proxy) + " (PXN)");
                break;
            case NetPath::PcieTree:
                note("GPU " + std::to_string(g) + " reaches " + nicName
                     + " up the PCIe tree, across its server's CPUs");
                break;
            }
        }
    if (more > 0)
        m_faultNotes.push_back("and " + std::to_string(more) + " more GPU" + (more == 1 ? "" : "s")
                               + " moved to another NIC");
}

void Topology::checkRoutable(const std::vector<std::size_t> &linkCause)
{
    const int leaves = countOf(DeviceKind::Leaf);
    if (leaves <= 1 || m_nicLeaf.empty())
        return;
    // Leaves whose working NICs carry some GPU's traffic.
    std::vector<std::uint8_t> used(static_cast<std::size_t>(leaves), 0);
    for (int g = 0; g < gpuCount(); ++g)
        if (!gpuDown(g))
            for (int nic : gpuNics(g))
                if (const int leaf = leafOfNic(nic - m_firstNic); leaf >= 0)
                    used[static_cast<std::size_t>(leaf)] = 1;
    for (int leaf = 0; leaf < leaves; ++leaf) {
        const auto ups = leafUplinks(leaf);
        if (!used[static_cast<std::size_t>(leaf)] || ups.empty())
            continue;
        double lanes = 0;
        std::size_t cause = kNoCause;
        for (int l : ups) {
            lanes += m_links[static_cast<std::size_t>(l)].workingLanes();
            cause = std::min(cause, linkCause[static_cast<std::size_t>(l)]);
        }
        if (lanes <= 0)
            fail(cause == kNoCause ? 0 : cause,
                 "",
                 "every uplink of leaf " + std::to_string(leaf)
                         + " is down: the traffic of its NICs to other leaves cannot be routed "
                           "(take the leaf down too, and its servers' GPUs move to other rails)");
    }
    // Three tiers: a pod whose spines have no working link to the cores.
    const ClusterShape &s = m_shape;
    if (s.fabric != FabricKind::ThreeTier || s.cores <= 0 || s.spinesPerPod <= 0)
        return;
    const int pods = s.spines / s.spinesPerPod;
    for (int pod = 0; pod < pods; ++pod) {
        double lanes = 0;
        std::size_t cause = kNoCause;
        for (int k = 0; k < s.spinesPerPod; ++k)
            for (int l : spineUplinks(pod * s.spinesPerPod + k)) {
                lanes += m_links[static_cast<std::size_t>(l)].workingLanes();
                cause = std::min(cause, linkCause[static_cast<std::size_t>(l)]);
            }
        if (lanes <= 0)
            fail(cause == kNoCause ? 0 : cause,
                 "",
                 "every link from pod " + std::to_string(pod)
                         + "'s spines to the cores is down: its traffic to other pods cannot be "
                           "routed");
    }
}

} // namespace railyard::engine
