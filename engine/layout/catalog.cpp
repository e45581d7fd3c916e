#include "layout/catalog.h"

#include "base/boundedread.h"
#include "base/jsoncursor.h"
#include "base/units.h"
#include "layout/catalogfile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sys/stat.h>

namespace railyard::engine {

extern const char *const kBuiltinCatalogJson; // generated from resources/catalog.json

namespace {

template<typename T, typename Key>
void upsert(std::vector<T> &list, T item, Key key)
{
    const auto it = std::find_if(list.begin(), list.end(), [&](const T &e) {
        return key(e) == key(item);
    });
    if (it != list.end())
        *it = std::move(item);
    else
        list.push_back(std::move(item));
}

// A rate (bandwidth, throughput, capacity): positive and finite, at most `max`. Zero is refused
// with the others: a link of 0 GB/s makes every transfer over it take forever.
double rate(const JsonCursor &c, double max, const char *unit)
{
    const double v = c.value().is_number() ? c.value().get<double>() : 0;
    if (!c.value().is_number() || !std::isfinite(v) || !(v > 0) || v > max)
        c.expected(std::string("a positive number of ") + unit + " up to " + formatNumber(max, 12));
    return v;
}

std::string readId(const JsonCursor &c)
{
    const JsonCursor id = c.at("id");
    const std::string s = id.toString();
    if (s.empty())
        id.expected("a non-empty id");
    return s;
}

GpuSpec readGpu(const JsonCursor &c)
{
    GpuSpec g;
    g.id = readId(c);
    g.name = c.stringOr("name", g.id);
    g.architecture = c.at("architecture").toChoice({"volta", "ampere", "hopper", "blackwell"});
    g.bf16Tflops = rate(c.at("bf16_tflops"), 1e6, "TFLOPS");
    g.fp8Tflops = c.doubleOr("fp8_tflops", 0, 0, 1e6);
    g.fp4Tflops = c.doubleOr("fp4_tflops", 0, 0, 1e6);
    g.hbmGB = rate(c.at("hbm_gb"), 1e5, "GB");
    g.hbmTBPerS = rate(c.at("hbm_tb_per_s"), 1e3, "TB/s");
    // Absent: the datasheet bytes less the ~0.5% the driver keeps (ECC, reserved pages).
    g.hbmUsableGiB = c.doubleOr("hbm_usable_gib",
                                g.hbmGB * 1e9 / (1024.0 * 1024.0 * 1024.0) * 0.995,
                                0.1,
                                g.hbmGB * 1e9 / (1024.0 * 1024.0 * 1024.0) * 1.1);
    const JsonCursor nv = c.at("nvlink");
    g.nvlink.generation = static_cast<int>(nv.at("generation").toInt(0, 10));
    // Every GPU here has NVLink: the engine prices a server's GPU-to-GPU traffic on it, so 0
    // links or 0 GB/s would price it at infinite time (or, per lane, at an invented rate).
    g.nvlink.links = static_cast<int>(nv.at("links").toInt(1, 1000));
    g.nvlink.gbPerS = rate(nv.at("gb_per_s"), 1e5, "GB/s");
    g.nvlink.efficiency = nv.at("efficiency").toDouble(0.01, 1);
    g.nvswitchesPerDomain = c.intOr("nvswitches_per_domain", 0, 0, 1000);
    g.nvls = c.boolOr("nvls", false);
    g.nvlsEfficiency = c.doubleOr("nvls_efficiency", 0, 0, 1);
    g.nvlinkAllToAllEfficiency = c.doubleOr("nvlink_alltoall_efficiency", 1, 0.01, 1);
    g.p2pChannelGBps = c.doubleOr("p2p_channel_gbps", 0, 0, 1000);
    g.netHeadsPerDomain = c.intOr("net_heads_per_domain", 0, 0, 100000);
    g.pcieGen = c.intOr("pcie_gen", 5, 3, 7);
    g.tdpW = c.doubleOr("tdp_w", 0, 0, 1e5);
    g.defaultNic = c.stringOr("default_nic", "CX7-NDR");
    g.pricePerGpuHour = c.doubleOr("price_per_gpu_hour", 0, 0, 1e4);
    g.sms = c.intOr("sms", 132, 1, 10000);
    if (const auto gemm = c.find("gemm_efficiency")) {
        g.gemmEfficiencyBf16 = gemm->doubleOr("bf16", 0.75, 0.05, 1);
        g.gemmEfficiencyFp8 = gemm->doubleOr("fp8", 0, 0, 1);
    }
    g.attentionEfficiency = c.doubleOr("attention_efficiency", 0.5, 0.05, 1);
    g.memoryEfficiency = c.doubleOr("memory_efficiency", 0.8, 0.05, 1);
    g.memoryEfficiencyBackward = c.doubleOr("memory_efficiency_backward", 0, 0, 1);
    g.sustainedClock = c.doubleOr("sustained_clock", 1.0, 0.3, 1);
    g.sustainedClockFp8 = c.doubleOr("sustained_clock_fp8", g.sustainedClock, 0.3, 1);
    g.graphKernelS = c.doubleOr("graph_kernel_us", 0, 0, 1000) * 1e-6;
    g.hostOpS = c.doubleOr("host_op_us", 0, 0, 10000) * 1e-6;
    if (const auto copy = c.find("host_copy_gb_per_s")) {
        copy->requireObject();
        g.hostCopyD2hGBs = copy->at("d2h").toDouble(0.1, 1e4);
        g.hostCopyH2dGBs = copy->at("h2d").toDouble(0.1, 1e4);
    }
    if (const auto kernels = c.find("attention_kernels")) {
        kernels->requireObject();
        for (const char *name : {"fa1", "triton", "fa2", "fa3", "cudnn"})
            if (const auto k = kernels->find(name)) {
                k->requireObject();
                AttentionKernelSpec a;
                a.kernel = name;
                a.forward = k->at("forward").toDouble(0.05, 1);
                a.backward = k->at("backward").toDouble(0.05, 1);
                if (const auto h = k->find("head_dim_64")) {
                    h->requireObject();
                    a.forwardHead64 = h->at("forward").toDouble(0.51, 1);
                    a.backwardHead64 = h->at("backward").toDouble(0.51, 1);
                }
                g.attentionKernels.push_back(a);
            }
    }
    return g;
}

} // namespace

const AttentionKernelSpec *GpuSpec::attentionKernel(const std::string &kernel) const
{
    for (const AttentionKernelSpec &a : attentionKernels)
        if (a.kernel == kernel)
            return &a;
    return nullptr;
}

namespace {

NicModel readNic(const JsonCursor &c)
{
    NicModel n;
    n.id = readId(c);
    n.name = c.stringOr("name", n.id);
    n.fabric = c.at("fabric").toChoice({"ib", "ethernet"});
    n.transport = c.find("transport")
                          ? c.at("transport").toChoice({"ib", "roce", "efa", "opa", "tcpxo"})
                          : (n.fabric == "ib" ? "ib" : "roce");
    n.gbitPerS = rate(c.at("gbit_per_s"), 1e5, "Gb/s");
    n.efficiency = c.at("efficiency").toDouble(0.01, 1);
    n.latencyUs = c.doubleOr("latency_us", 1.0, 0, 1e4);
    n.messageUs = c.doubleOr("message_us", 0, 0, 1e4);
    n.multipath = c.boolOr("multipath", false);
    return n;
}

PcieSpec readPcie(const JsonCursor &c)
{
    PcieSpec p;
    p.generation = static_cast<int>(c.at("generation").toInt(1, 10));
    p.gbPerS = rate(c.at("gb_per_s"), 1e4, "GB/s");
    p.efficiency = c.at("efficiency").toDouble(0.01, 1);
    return p;
}

SwitchModel readSwitch(const JsonCursor &c)
{
    SwitchModel s;
    s.id = readId(c);
    s.name = c.stringOr("name", s.id);
    s.fabric = c.at("fabric").toChoice({"ib", "ethernet"});
    s.ports = static_cast<int>(c.at("ports").toInt(2, 100000));
    s.portGbitPerS = rate(c.at("port_gbit_per_s"), 1e5, "Gb/s");
    s.sharp = c.boolOr("sharp", false);
    s.latencyUs = c.doubleOr("latency_us", 0.2, 0, 1e4);
    return s;
}

// Reads the array `key`; an entry whose key() repeats an earlier one is refused (the second
// would be unreachable, or silently win, depending on who looks it up).
template<typename T, typename F, typename Key>
void readList(const JsonCursor &root, const char *key, std::vector<T> &out, F read, Key keyOf)
{
    const auto list = root.find(key);
    if (!list)
        return;
    list->requireArray();
    for (std::size_t i = 0; i < list->size(); ++i) {
        T item = read(list->at(i));
        for (std::size_t j = 0; j < out.size(); ++j)
            if (keyOf(out[j]) == keyOf(item))
                list->at(i).fail("the same entry as " + list->path() + "/" + std::to_string(j)
                                 + " (each id or generation appears once)");
        out.push_back(std::move(item));
    }
}

} // namespace

Catalog Catalog::fromJsonText(const std::string &text, const std::string &file)
{
    const Json doc = parseJsonText(text, file);
    const JsonCursor root(doc, file);
    root.requireObject();
    if (const auto format = root.find("format"); format && format->toString() != "railyard-catalog")
        format->expected("\"railyard-catalog\"");
    if (const auto version = root.find("version"))
        version->toInt(1, 1);
    Catalog c;
    readList(root, "gpus", c.m_gpus, readGpu, [](const GpuSpec &e) { return e.id; });
    readList(root, "nics", c.m_nics, readNic, [](const NicModel &e) { return e.id; });
    readList(root, "pcie", c.m_pcie, readPcie, [](const PcieSpec &e) {
        return std::to_string(e.generation);
    });
    readList(root, "switches", c.m_switches, readSwitch, [](const SwitchModel &e) { return e.id; });
    c.fillHostCopy();
    return c;
}

void Catalog::fillHostCopy()
{
    for (GpuSpec &g : m_gpus) {
        if (g.hostCopyD2hGBs > 0 && g.hostCopyH2dGBs > 0)
            continue;
        const PcieSpec *p = pcie(g.pcieGen);
        if (!p && !m_pcie.empty())
            p = &m_pcie.back();
        if (p)
            g.hostCopyD2hGBs = g.hostCopyH2dGBs = p->gbPerS * p->efficiency;
    }
}

const Catalog &Catalog::compiledIn()
{
    static const Catalog catalog = fromJsonText(kBuiltinCatalogJson, "catalog.json (built in)");
    return catalog;
}

namespace {

struct UserCatalog
{
    std::string path;
    std::string error;
    Catalog merged;
};

// The user's catalog file: $RAILYARD_CATALOG, else the configuration folder's catalog.json when
// something is there (stat only: opening a FIFO to see whether it exists would block).
std::string userCatalogFile(std::string &source)
{
    if (const char *env = std::getenv("RAILYARD_CATALOG"); env && *env) {
        source = "$RAILYARD_CATALOG";
        return env;
    }
    std::string base;
    if (const char *xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
        base = xdg;
        source = "$XDG_CONFIG_HOME/railyard/catalog.json";
    } else if (const char *home = std::getenv("HOME"); home && *home) {
        base = std::string(home) + "/.config";
        source = "~/.config/railyard/catalog.json";
    }
    if (base.empty())
        return {};
    const std::string candidate = base + "/railyard/catalog.json";
    struct stat st
    {};
    if (::stat(candidate.c_str(), &st) != 0)
        return {}; // none there (or a folder Railyard may not look into)
    return candidate;
}

const UserCatalog &userCatalog()
{
    static const UserCatalog user = [] {
        UserCatalog u;
        u.merged = Catalog::compiledIn();
        std::string source;
        u.path = userCatalogFile(source);
        if (u.path.empty())
            return u;
        // Read as a layout is (regular files only, never blocking, bounded) and checked in
        // full before any entry is used: a bad file leaves the built-in catalog alone.
        try {
            u.merged.merge(readCatalogFile(u.path));
        } catch (const InputError &e) {
            u.error = e.what();
        } catch (const std::bad_alloc &) {
            u.error = echo(u.path) + ": out of memory reading it";
        } catch (const std::exception &e) {
            u.error = echo(u.path) + ": " + echo(e.what(), 200);
        }
        if (!u.error.empty()) {
            u.merged = Catalog::compiledIn();
            u.error = "bad user catalog (from " + source + "): " + u.error;
        }
        return u;
    }();
    return user;
}

} // namespace

const Catalog &Catalog::builtin()
{
    return userCatalog().merged;
}

const std::string &Catalog::userCatalogPath()
{
    return userCatalog().path;
}

const std::string &Catalog::userCatalogError()
{
    return userCatalog().error;
}

void Catalog::merge(const Catalog &other)
{
    for (const auto &g : other.m_gpus)
        upsert(m_gpus, g, [](const GpuSpec &e) { return e.id; });
    for (const auto &n : other.m_nics)
        upsert(m_nics, n, [](const NicModel &e) { return e.id; });
    for (const auto &p : other.m_pcie)
        upsert(m_pcie, p, [](const PcieSpec &e) { return e.generation; });
    for (const auto &s : other.m_switches)
        upsert(m_switches, s, [](const SwitchModel &e) { return e.id; });
    fillHostCopy();
}

void Catalog::setGpu(const GpuSpec &gpu)
{
    upsert(m_gpus, gpu, [](const GpuSpec &e) { return e.id; });
    fillHostCopy();
}

const GpuSpec *Catalog::gpu(const std::string &id) const
{
    for (const auto &g : m_gpus)
        if (g.id == id)
            return &g;
    return nullptr;
}

const NicModel *Catalog::nic(const std::string &id) const
{
    for (const auto &n : m_nics)
        if (n.id == id)
            return &n;
    return nullptr;
}

const PcieSpec *Catalog::pcie(int generation) const
{
    for (const auto &p : m_pcie)
        if (p.generation == generation)
            return &p;
    return nullptr;
}

const SwitchModel *Catalog::switchModel(const std::string &id) const
{
    for (const auto &s : m_switches)
        if (s.id == id)
            return &s;
    return nullptr;
}

const NicModel *Catalog::nicForRate(double gbitPerS, const std::string &fabric) const
{
    for (const auto &n : m_nics)
        if (n.gbitPerS == gbitPerS && (fabric.empty() || n.fabric == fabric))
            return &n;
    return nullptr;
}

const SwitchModel *Catalog::switchForRate(double gbitPerS, const std::string &fabric) const
{
    const SwitchModel *best = nullptr;
    for (const auto &s : m_switches) {
        if (s.fabric != fabric || s.portGbitPerS < gbitPerS)
            continue;
        if (!best || s.portGbitPerS < best->portGbitPerS)
            best = &s;
    }
    if (!best) {
        for (const auto &s : m_switches)
            if (s.fabric == fabric && (!best || s.portGbitPerS > best->portGbitPerS))
                best = &s;
    }
    return best;
}

std::string Catalog::gpuIdList() const
{
    std::string s;
    for (const auto &g : m_gpus)
        s += (s.empty() ? "" : ", ") + g.id;
    return s;
}

Catalog readCatalogFile(const std::string &path)
{
    return Catalog::fromJsonText(readBoundedFile(path,
                                                 kMaxCatalogBytes,
                                                 "a catalog file (JSON)",
                                                 "a catalog"),
                                 path);
}

} // namespace railyard::engine
