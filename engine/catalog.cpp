#include "catalog.h"

#include "jsoncursor.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

GpuSpec readGpu(const JsonCursor &c)
{
    GpuSpec g;
    g.id = c.at("id").toString();
    g.name = c.stringOr("name", g.id);
    g.architecture = c.at("architecture").toChoice({"volta", "ampere", "hopper", "blackwell"});
    g.bf16Tflops = c.at("bf16_tflops").toDouble(1, 1e6);
    g.fp8Tflops = c.doubleOr("fp8_tflops", 0, 0, 1e6);
    g.hbmGB = c.at("hbm_gb").toDouble(1, 1e5);
    g.hbmTBPerS = c.at("hbm_tb_per_s").toDouble(0.1, 1e3);
    // Absent: the datasheet bytes less the ~0.5% the driver keeps (ECC, reserved pages).
    g.hbmUsableGiB = c.doubleOr("hbm_usable_gib",
                                g.hbmGB * 1e9 / (1024.0 * 1024.0 * 1024.0) * 0.995,
                                0.1,
                                g.hbmGB * 1e9 / (1024.0 * 1024.0 * 1024.0) * 1.1);
    const JsonCursor nv = c.at("nvlink");
    g.nvlink.generation = static_cast<int>(nv.at("generation").toInt(0, 10));
    g.nvlink.links = static_cast<int>(nv.at("links").toInt(0, 1000));
    g.nvlink.gbPerS = nv.at("gb_per_s").toDouble(0, 1e5);
    g.nvlink.efficiency = nv.at("efficiency").toDouble(0.01, 1);
    g.nvswitchesPerDomain = c.intOr("nvswitches_per_domain", 0, 0, 1000);
    g.nvls = c.boolOr("nvls", false);
    g.nvlsEfficiency = c.doubleOr("nvls_efficiency", 0, 0, 1);
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
    return g;
}

NicModel readNic(const JsonCursor &c)
{
    NicModel n;
    n.id = c.at("id").toString();
    n.name = c.stringOr("name", n.id);
    n.fabric = c.at("fabric").toChoice({"ib", "ethernet"});
    n.gbitPerS = c.at("gbit_per_s").toDouble(1, 1e5);
    n.efficiency = c.at("efficiency").toDouble(0.01, 1);
    n.latencyUs = c.doubleOr("latency_us", 1.0, 0, 1e4);
    return n;
}

PcieSpec readPcie(const JsonCursor &c)
{
    PcieSpec p;
    p.generation = static_cast<int>(c.at("generation").toInt(1, 10));
    p.gbPerS = c.at("gb_per_s").toDouble(0.1, 1e4);
    p.efficiency = c.at("efficiency").toDouble(0.01, 1);
    return p;
}

SwitchModel readSwitch(const JsonCursor &c)
{
    SwitchModel s;
    s.id = c.at("id").toString();
    s.name = c.stringOr("name", s.id);
    s.fabric = c.at("fabric").toChoice({"ib", "ethernet"});
    s.ports = static_cast<int>(c.at("ports").toInt(2, 100000));
    s.portGbitPerS = c.at("port_gbit_per_s").toDouble(1, 1e5);
    s.sharp = c.boolOr("sharp", false);
    s.latencyUs = c.doubleOr("latency_us", 0.2, 0, 1e4);
    return s;
}

template<typename T, typename F>
void readList(const JsonCursor &root, const char *key, std::vector<T> &out, F read)
{
    const auto list = root.find(key);
    if (!list)
        return;
    list->requireArray();
    for (std::size_t i = 0; i < list->size(); ++i)
        out.push_back(read(list->at(i)));
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
    readList(root, "gpus", c.m_gpus, readGpu);
    readList(root, "nics", c.m_nics, readNic);
    readList(root, "pcie", c.m_pcie, readPcie);
    readList(root, "switches", c.m_switches, readSwitch);
    return c;
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

const UserCatalog &userCatalog()
{
    static const UserCatalog user = [] {
        UserCatalog u;
        u.merged = Catalog::compiledIn();
        if (const char *env = std::getenv("RAILYARD_CATALOG"); env && *env) {
            u.path = env;
        } else {
            std::string base;
            if (const char *xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
                base = xdg;
            else if (const char *home = std::getenv("HOME"); home && *home)
                base = std::string(home) + "/.config";
            const std::string candidate = base + "/railyard/catalog.json";
            if (!base.empty() && std::ifstream(candidate).good())
                u.path = candidate;
        }
        if (u.path.empty())
            return u;
        std::ifstream in(u.path, std::ios::binary);
        if (!in) {
            u.error = u.path + ": cannot open the user catalog";
            return u;
        }
        std::stringstream text;
        text << in.rdbuf();
        try {
            u.merged.merge(Catalog::fromJsonText(text.str(), u.path));
        } catch (const InputError &e) {
            u.error = e.what();
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

} // namespace railyard::engine
