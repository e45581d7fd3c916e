#include "import/importer.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/units.h"
#include "base/xmlreader.h"
#include "collectives/collective.h"
#include "import/calibration.h"
#include "import/faulthypotheses.h"
#include "import/importchecks.h"
#include "import/importtext.h"
#include "import/nccltestsfilter.h"
#include "import/nccltopofilter.h"
#include "import/topomatrixfilter.h"
#include "planner/defaultplan.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace railyard::engine {

namespace {

std::string lower(std::string s)
{
    for (char &c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// Text from the file as it may go into JSON and messages: valid UTF-8, no control characters.
std::string safeText(const std::string &s)
{
    return echo(s, 1000);
}

bool looksLikeXml(std::string_view text)
{
    std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
        ++i;
    return i < text.size() && text[i] == '<';
}

// A catalog GPU id from a product name or PCI id ("NVIDIA H100 80GB HBM3", "0x10de:0x2335"),
// with a note when the match is not exact.
std::string gpuFromName(const std::string &name, std::string &why)
{
    const std::string n = lower(name);
    struct Rule
    {
        const char *key;
        const char *id;
        const char *note;
    };
    static const Rule rules[] = {
            {"gb300", "GB300", nullptr},
            {"gb200", "GB200", nullptr},
            {"b300", "B200", "B300 is not in the catalog; priced as B200"},
            {"b200", "B200", nullptr},
            {"0x2901", "B200", nullptr},
            {"h200", "H200-SXM", nullptr},
            {"0x2335", "H200-SXM", nullptr},
            {"h800", "H800-SXM", nullptr},
            {"h20",
             "H100-SXM",
             "H20 is not in the catalog; priced as H100-SXM (same NVLink, far "
             "less compute)"},
            {"h100", "H100-SXM", nullptr},
            {"0x2330", "H100-SXM", nullptr},
            {"a100", "A100-SXM-80GB", nullptr},
            {"0x20b0", "A100-SXM-80GB", nullptr},
            {"0x20b2", "A100-SXM-80GB", nullptr},
            {"0x20b5", "A100-SXM-80GB", "A100 PCIe priced as A100-SXM-80GB"},
            {"v100", "A100-SXM-80GB", "V100 is not in the catalog; priced as A100-SXM-80GB"},
    };
    for (const Rule &r : rules)
        if (n.find(r.key) != std::string::npos) {
            if (r.note)
                why = r.note;
            return r.id;
        }
    return {};
}

// The GPU the layout uses, and why. `source` says how it is known ("--gpu", "read from the
// file", "taken from the file name"), or stays empty when only assumed from the NVLink count.
std::string chooseGpu(const ImportedMachine &m,
                      const ImportOptions &o,
                      std::vector<std::string> &notes,
                      std::string &source)
{
    if (!o.gpu.empty()) {
        source = "--gpu";
        return o.gpu;
    }
    source = "read from the file";
    std::string why;
    std::string id;
    for (const ImportedGpu &g : m.gpus)
        if (!g.model.empty() && (id = gpuFromName(g.model, why)).size())
            break;
    if (id.empty())
        for (const ImportedGpu &g : m.gpus) {
            if (g.sm >= 100)
                id = "B200";
            else if (g.sm >= 90)
                id = "H100-SXM";
            else if (g.sm >= 70)
                id = "A100-SXM-80GB";
            if (!id.empty()) {
                why = "GPU model read from the compute capability (sm " + std::to_string(g.sm)
                      + ")";
                break;
            }
        }
    if (id.empty()) {
        // The file's name often says the machine ("hgx-h200-...txt").
        id = gpuFromName(std::filesystem::path(m.file).filename().string(), why);
        source = "taken from the file name";
        if (!id.empty())
            why = "the file does not name its GPUs; " + id + " taken from the file name"
                  + (why.empty() ? "" : " (" + why + ")");
    }
    if (id.empty()) {
        const int lanes = m.gpus.empty() ? 0 : m.gpus.front().nvlinks;
        id = lanes >= 18 ? "H100-SXM" : lanes == 8 ? "H800-SXM" : "A100-SXM-80GB";
        source.clear();
        why = "the file does not name its GPUs; " + id + " assumed from "
              + (lanes > 0 ? std::to_string(lanes) + " NVLinks per GPU" : "no NVLink")
              + " (choose another with --gpu)";
    }
    if (!why.empty())
        notes.push_back(why);
    return id;
}

// NICs per server the generated shape can hold nearest `want` (whole, shared evenly).
int nearestNicCount(int want, int gpus)
{
    if (want <= 0)
        return 0;
    int best = 1, bestDist = 1 << 30;
    for (int k = 1; k <= 16 * gpus; ++k) {
        if ((k >= gpus ? k % gpus : gpus % k) != 0)
            continue;
        const int dist = std::abs(k - want);
        if (dist < bestDist) {
            best = k;
            bestDist = dist;
        }
    }
    return best;
}

Json devicesJson(const ImportedMachine &m)
{
    Json gpus = Json::array();
    for (const ImportedGpu &g : m.gpus) {
        Json j = {{"label", safeText(g.label)}};
        if (!g.host.empty())
            j["host"] = safeText(g.host);
        if (!g.busId.empty())
            j["bus_id"] = safeText(g.busId);
        if (!g.model.empty())
            j["model"] = safeText(g.model);
        if (!g.cpuAffinity.empty())
            j["cpu_affinity"] = safeText(g.cpuAffinity);
        if (!g.numaAffinity.empty())
            j["numa_affinity"] = safeText(g.numaAffinity);
        if (g.numa >= 0)
            j["numa"] = g.numa;
        j["nvlinks"] = g.nvlinks;
        gpus.push_back(j);
    }
    Json nics = Json::array();
    for (const ImportedNic &n : m.nics) {
        Json j = {{"label", safeText(n.label)}, {"name", safeText(n.name)}};
        if (n.gbitPerS > 0)
            j["gbps"] = n.gbitPerS;
        if (n.nearestGpu >= 0) {
            j["nearest_gpu"] = n.nearestGpu;
            j["path"] = safeText(n.nearestPath);
        }
        nics.push_back(j);
    }
    Json links = Json::array();
    if (m.links.size() <= 20000)
        for (const ImportedLink &l : m.links) {
            Json j = {{"a", l.a}, {"b", l.b}, {"kind", l.kind}};
            if (l.count != 1)
                j["count"] = l.count;
            links.push_back(j);
        }
    return {{"gpus", gpus}, {"nics", nics}, {"links", links}};
}

// Modelled busbw of the log's collective on the layout (all GPUs), or -1 if it cannot be priced.
double modelledBusbw(const Layout &l, const Catalog &cat, CollectiveOp op, double bytes)
{
    try {
        return engine::modelledBusbw(buildTopology(l.cluster, cat), op, bytes);
    } catch (const InputError &) {
        return -1;
    }
}

void calibrate(Layout &layout, const ImportedMachine &m, const Catalog &cat, Json &imported)
{
    const Measurement *ref = m.largest();
    const auto op = ncclTestsOp(m.collective);
    if (!ref || !op || m.ranks < 2 || ref->busbwGBps <= 0) {
        layout.notes += "\nNo calibration: "
                        + std::string(!op ? "the " + m.collective
                                                      + " test is not a collective Railyard prices"
                                          : "fewer than 2 ranks or no bandwidth measured")
                        + ".";
        return;
    }
    const double measured = ref->busbwGBps;
    const double before = modelledBusbw(layout, cat, *op, ref->sizeBytes);
    if (before <= 0)
        return;
    // Short of the model at the largest size: which degraded link or missing rail would
    // explain it (priced before the calibration absorbs the gap into the efficiency).
    std::vector<MeasuredPoint> measuredPoints;
    for (const Measurement &x : m.measurements)
        if (!x.inPlace && x.sizeBytes > 0 && x.busbwGBps > 0)
            measuredPoints.push_back({x.sizeBytes, x.busbwGBps});
    const std::vector<FaultHypothesis> hypotheses = faultHypotheses(layout, *op, measuredPoints);
    // Bisection on the achieved fraction of line rate (the model's busbw grows with it).
    Layout probe = layout;
    const auto at = [&](double e) {
        probe.cluster.tuning.efficiency = e;
        return modelledBusbw(probe, cat, *op, ref->sizeBytes);
    };
    double lo = 0.01, hi = 1.0;
    double efficiency = 1.0;
    const double top = at(hi);
    if (top < measured) {
        efficiency = 1.0;
        layout.notes += "\nThe measured bus bandwidth (" + formatNumber(measured)
                        + " GB/s) is above the model at full line rate (" + formatNumber(top)
                        + " GB/s): efficiency set to 1.";
    } else {
        for (int k = 0; k < 30; ++k) {
            const double mid = 0.5 * (lo + hi);
            (at(mid) < measured ? lo : hi) = mid;
        }
        efficiency = std::round(hi * 1000) / 1000;
    }
    layout.cluster.tuning.efficiency = efficiency;
    const double after = modelledBusbw(layout, cat, *op, ref->sizeBytes);
    Json points = Json::array();
    for (const Measurement &x : m.measurements) {
        if (x.inPlace || x.sizeBytes <= 0)
            continue;
        points.push_back({{"size_bytes", x.sizeBytes},
                          {"measured_busbw_gbps", x.busbwGBps},
                          {"modelled_busbw_gbps", modelledBusbw(layout, cat, *op, x.sizeBytes)}});
        if (points.size() >= 64)
            break;
    }
    imported["calibration"] = {{"op", m.collective},
                               {"size_bytes", ref->sizeBytes},
                               {"measured_busbw_gbps", measured},
                               {"modelled_busbw_gbps_before", before},
                               {"modelled_busbw_gbps", after},
                               {"efficiency", efficiency},
                               {"points", points}};
    layout.notes += "\nCalibrated: " + m.collective + " at " + formatBytes(ref->sizeBytes)
                    + " measured " + formatNumber(measured) + " GB/s busbw; the model gave "
                    + formatNumber(before) + " GB/s, " + formatNumber(after)
                    + " GB/s with tuning.efficiency " + formatNumber(efficiency) + ".";
    if (!hypotheses.empty()) {
        Json list = Json::array();
        layout.notes += "\nOr a fault (the measurement is "
                        + formatNumber(100 * (1 - measured / before), 3)
                        + "% short of the healthy model at " + formatBytes(ref->sizeBytes)
                        + "); hypotheses that would explain it:";
        for (const FaultHypothesis &h : hypotheses) {
            list.push_back({{"faults", faultsToJson(h.faults)},
                            {"hypothesis", h.text},
                            {"size_bytes", h.sizeBytes},
                            {"measured_busbw_gbps", h.measuredGBps},
                            {"modelled_busbw_gbps", h.modelledGBps},
                            {"healthy_busbw_gbps", h.healthyGBps},
                            {"fit", h.fit}});
            layout.notes += "\n- " + h.text + ": the model gives " + formatNumber(h.modelledGBps)
                            + " GB/s busbw (measured " + formatNumber(h.measuredGBps)
                            + "); RMS log error " + formatNumber(h.fit, 2)
                            + " over the sizes from 256 MiB";
        }
        imported["calibration"]["fault_hypotheses"] = list;
    }
}

} // namespace

ImportedMachine importText(const std::string &text, const std::string &file)
{
    checkImportText(text, file);
    if (looksLikeXml(text)) {
        const XmlElement root = parseXml(text, file);
        if (NcclTopoFilter::sniff(root))
            return NcclTopoFilter::read(root, file);
        if (NcclGraphFilter::sniff(root))
            return NcclGraphFilter::read(root, file);
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(root.line)),
                         "the root element is <" + root.name
                                 + ">; expected <system> (NCCL topology) or <graphs> (NCCL graph)");
    }
    const std::vector<std::string> lines = splitImportLines(text, file);
    if (TopoMatrixFilter::sniff(lines))
        return TopoMatrixFilter::read(lines, file);
    if (NcclTestsFilter::sniff(lines))
        return NcclTestsFilter::read(lines, file);
    throw InputError(file,
                     "line 1",
                     "not a format Railyard imports: expected nvidia-smi topo -m output (a header "
                     "with GPU0 ... CPU Affinity), NCCL topology or graph XML, or an nccl-tests "
                     "log");
}

ImportedMachine importFile(const std::string &path)
{
    return importText(readImportText(path), path);
}

Layout layoutFromImport(const ImportedMachine &m, const Catalog &cat, const ImportOptions &o)
{
    std::vector<std::string> dev; // deviations from the generated shape
    Layout l;
    const std::string base = std::filesystem::path(m.file).filename().string();
    l.title = "Imported: " + echo(base);
    std::vector<std::string> notes = m.notes;
    std::string gpuSource;
    l.cluster.gpu = chooseGpu(m, o, notes, gpuSource);
    const GpuSpec *spec = cat.gpu(l.cluster.gpu);
    if (!spec)
        throw InputError(m.file,
                         "",
                         "unknown GPU " + quote(l.cluster.gpu)
                                 + " (expected one of: " + cat.gpuIdList() + ")");
    checkNvlinkLanes(m, cat, gpuSource.empty() ? nullptr : spec, gpuSource);

    const int hosts = std::max<int>(1, static_cast<int>(m.hosts.size()));
    const int perHost = std::max(1, m.gpusPerHost());
    if (m.gpus.empty())
        throw InputError(m.file, "", "no GPU found");
    if (perHost > 128)
        throw InputError(m.file,
                         "",
                         std::to_string(perHost)
                                 + " GPUs in one server; a layout holds at most 128");
    if (static_cast<long long>(hosts) * perHost > kMaxGpus)
        throw InputError(m.file, "", "more GPUs than Railyard accepts");
    l.cluster.nodes = hosts;
    l.cluster.gpusPerNode = perHost;
    l.cluster.nvlinkDomain = perHost;

    // NVLink.
    const auto counts = m.linkCounts();
    const bool hasNvlink = m.nvlinkLanes() > 0 || m.format == "nccl-tests"
                           || m.format == "nccl-graph-xml";
    if (!hasNvlink && m.format != "nccl-topo-xml")
        dev.push_back("no NVLink between the GPUs (PCIe only); the layout still models NVLink "
                      "inside the server, which this machine lacks");
    if (!hasNvlink && m.format == "nccl-topo-xml")
        dev.push_back("the file lists no NVLink; the layout assumes the GPU's standard NVLink");
    if (m.format == "nvidia-smi-topo" && m.nvlinkLanes() > 0 && !m.nvlinkSwitched) {
        const int pairs = perHost * (perHost - 1) / 2;
        const int nv = counts.count("nvlink") ? counts.at("nvlink") : 0;
        dev.push_back("a direct NVLink mesh (" + std::to_string(nv) + " of " + std::to_string(pairs)
                      + " GPU pairs linked), not an NVSwitch; the layout models a switch");
    }
    if (!m.gpus.empty() && m.gpus.front().nvlinks > 0 && spec->nvlink.links > 0
        && m.gpus.front().nvlinks != spec->nvlink.links)
        dev.push_back(std::to_string(m.gpus.front().nvlinks) + " NVLinks per GPU in the file, "
                      + std::to_string(spec->nvlink.links) + " in the catalog's " + l.cluster.gpu);
    if (l.cluster.gpu == "GB200" || l.cluster.gpu == "GB300")
        notes.push_back("one compute tray: the NVL72 rack's other trays are not in this file");

    // NICs: those attached to a GPU on PCIe (rail NICs); all of them if none is.
    int railNics = 0;
    double gbps = 0;
    for (const ImportedNic &n : m.nics)
        if (n.nearestGpu >= 0) {
            ++railNics;
            gbps = std::max(gbps, n.gbitPerS);
        }
    if (railNics == 0)
        railNics = static_cast<int>(m.nics.size());
    if (gbps <= 0)
        for (const ImportedNic &n : m.nics)
            gbps = std::max(gbps, n.gbitPerS);
    if (static_cast<int>(m.nics.size()) > railNics)
        notes.push_back(std::to_string(m.nics.size() - railNics)
                        + " NIC(s) near no GPU (frontend or storage) left out");
    const bool nicsKnown = m.format != "nccl-tests" && m.format != "nccl-graph-xml";
    int nics = nicsKnown ? nearestNicCount(railNics, perHost) : perHost;
    if (nicsKnown && nics != railNics)
        dev.push_back(std::to_string(railNics) + " NICs for " + std::to_string(perHost)
                      + " GPUs; the layout has " + std::to_string(nics) + " (NICs shared evenly)");
    if (nics == 0 && hosts > 1)
        nics = perHost;
    l.cluster.nic.perGpu = static_cast<double>(nics) / perHost;
    if (gbps <= 0) {
        const NicModel *def = cat.nic(spec->defaultNic);
        gbps = def ? def->gbitPerS : 400;
        if (nics > 0)
            notes.push_back("NIC rate not in the file; " + formatNumber(gbps)
                            + " Gb/s assumed (the " + l.cluster.gpu + " default)");
    }
    l.cluster.nic.gbitPerS = std::clamp(gbps, 1.0, 1e5);
    if (m.format == "nvidia-smi-topo") {
        // NICs attached to some GPUs only, or several NICs on one GPU.
        std::vector<int> per(static_cast<std::size_t>(perHost), 0);
        for (const ImportedNic &n : m.nics)
            if (n.nearestGpu >= 0 && n.nearestGpu < perHost)
                ++per[static_cast<std::size_t>(n.nearestGpu)];
        const auto [mn, mx] = std::minmax_element(per.begin(), per.end());
        if (railNics > 0 && *mn != *mx)
            dev.push_back("NICs are not spread evenly: " + std::to_string(*mx) + " on some GPUs, "
                          + std::to_string(*mn) + " on others");
    }
    if (m.pcieSwitches > 0 && m.pcieSwitches < perHost)
        dev.push_back(std::to_string(perHost) + " GPUs behind " + std::to_string(m.pcieSwitches)
                      + " PCIe switches (shared host links)");
    if (m.format == "nvidia-smi-topo") {
        int sharedSwitch = 0;
        for (const ImportedLink &k : m.links)
            if (k.a < perHost && k.b < perHost && (k.kind == "pix" || k.kind == "pxb"))
                ++sharedSwitch;
        if (sharedSwitch > 0)
            dev.push_back(std::to_string(sharedSwitch)
                          + " GPU pairs share a PCIe switch (PIX/PXB); the layout gives each GPU "
                            "its own");
    }
    if (hosts > 1 && l.cluster.nodes % std::max(1, l.cluster.nodesPerDomain()) != 0)
        l.cluster.nvlinkDomain = perHost;

    // The board as the file shows it, when the file shows it: the layout carries it (format 2)
    // and the engine prices its links, so the shape's deviations no longer apply.
    if (auto server = serverFromImport(m, *spec)) {
        l.cluster.server = std::move(*server);
        const int nicCount = l.cluster.server->count(ServerDeviceKind::Nic);
        l.cluster.gpusPerNode = perHost;
        l.cluster.nvlinkDomain = perHost;
        l.cluster.nic.perGpu = static_cast<double>(nicCount) / perHost;
        dev.clear();
        const ServerTemplate &t = *l.cluster.server;
        int direct = 0;
        for (const ServerLink &k : t.links)
            direct += t.devices[static_cast<std::size_t>(t.indexOf(k.b))].kind
                      == ServerDeviceKind::Gpu;
        notes.push_back(
                "The server is written out as found (layout format 2): "
                + std::to_string(t.count(ServerDeviceKind::Gpu)) + " GPUs, "
                + std::to_string(nicCount) + " NICs, "
                + std::to_string(t.count(ServerDeviceKind::PcieSwitch)) + " PCIe switches, "
                + std::to_string(t.count(ServerDeviceKind::Cpu)) + " CPUs, "
                + (t.count(ServerDeviceKind::NvSwitch) > 0
                           ? std::to_string(t.count(ServerDeviceKind::NvSwitch)) + " NVSwitches"
                   : direct > 0 ? std::to_string(direct) + " direct NVLink pairs"
                                : "no NVLink")
                + "; the engine prices its own links.");
    }

    std::string text = "Imported from " + echo(base) + " (" + m.format
                       + "): " + std::to_string(m.gpus.size()) + " GPUs"
                       + (hosts > 1 ? " on " + std::to_string(hosts) + " hosts" : "") + ", "
                       + std::to_string(m.nics.size()) + " NICs.";
    if (!dev.empty()) {
        text += "\nDeviations from the generated shape (the nearest one is priced):";
        for (const std::string &d : dev)
            text += "\n- " + d;
    }
    for (const std::string &n : notes)
        text += "\n" + safeText(n);
    l.notes = text;

    Json imported = {{"format", m.format},
                     {"file", echo(base)},
                     {"summary", importSummary(m)},
                     {"deviations", dev},
                     {"devices", devicesJson(m)}};
    imported["summary"].erase("file");
    imported["summary"].erase("measurements");
    if (!m.measurements.empty())
        calibrate(l, m, cat, imported);
    l.original = Json::object();
    l.original.get()["imported"] = imported;
    // A workload so the imported cluster prices at once: Llama 3 8B on the default plan's
    // parallel sizes (the user changes both in the Workload panel).
    ModelConfig model;
    model.preset = "llama3-8b";
    l.model = model;
    const Topology topology = buildTopology(l.cluster, cat);
    const DefaultPlan plan = defaultPlan(l, topology);
    l = withPlan(l, plan);
    l.notes += "\nWorkload: Llama 3 8B as a starting point (a file describes the machine, not "
               "the training run).";
    return l;
}

} // namespace railyard::engine
