// Physically impossible NVLink counts in imported files. Refused rather than noted: the engine
// prices a board's NVLinks as lanes x the per-lane rate, so one wrong NV# cell priced a server
// several times faster than its hardware with exit 0, and no other number in the file says
// which lane count is the right one. Counts below what the GPU has are real (an H800's NV8, a
// degraded link) and stay a deviation note of the import.
#include "import/importchecks.h"

#include "base/inputerror.h"
#include "import/importtext.h"

#include <algorithm>
#include <map>

namespace railyard::engine {

namespace {

std::string placeOf(const ImportedLink &l)
{
    if (l.line <= 0)
        return {};
    return lineRef(static_cast<std::size_t>(l.line))
           + (l.column > 0 ? ", column " + std::to_string(l.column) : "");
}

std::string label(const ImportedMachine &m, int device)
{
    const auto gpus = static_cast<int>(m.gpus.size());
    if (device >= 0 && device < gpus)
        return echo(m.gpus[static_cast<std::size_t>(device)].label, 30);
    const int nic = device - gpus;
    if (nic >= 0 && nic < static_cast<int>(m.nics.size()))
        return echo(m.nics[static_cast<std::size_t>(nic)].label, 30);
    return "an NVSwitch";
}

// "GPU3 row, column GPU5: NV24" (topo -m) or "GPU3's <nvlink count=\"24\">" (XML).
std::string linkName(const ImportedMachine &m, const ImportedLink &l)
{
    if (m.format == "nvidia-smi-topo")
        return label(m, l.a) + " row, column " + label(m, l.b) + ": NV" + std::to_string(l.count);
    return label(m, l.a) + "'s <nvlink count=\"" + std::to_string(l.count) + "\"> to "
           + label(m, l.b);
}

} // namespace

void checkNvlinkLanes(const ImportedMachine &m,
                      const Catalog &catalog,
                      const GpuSpec *gpu,
                      const std::string &source)
{
    if (m.format != "nvidia-smi-topo" && m.format != "nccl-topo-xml")
        return;
    int limit = 0;
    std::string allows;
    if (gpu) {
        limit = gpu->nvlink.links;
        allows = "the catalog's " + echo(gpu->id, 30) + " (" + source + ") has "
                 + std::to_string(limit) + " NVLink lanes per GPU";
    } else {
        for (const GpuSpec &g : catalog.gpus())
            limit = std::max(limit, g.nvlink.links);
        allows = "no GPU in the catalog has more than " + std::to_string(limit) + " NVLink lanes";
    }
    if (limit <= 0)
        return;
    const std::string hint = gpu && source != "--gpu"
                                     ? " (if the GPU is another, name it with --gpu)"
                                     : "";

    // One bundle of more lanes than a GPU has.
    for (const ImportedLink &l : m.links)
        if (l.kind == "nvlink" && l.count > limit)
            throw InputError(m.file, placeOf(l), linkName(m, l) + ", but " + allows + hint);

    // The lanes of one GPU: the NV cells of a direct mesh's row, the <nvlink> rows of an XML
    // GPU. (Into an NVSwitch fabric, topo -m shows the GPU's lanes in every cell: checked above.)
    if (m.format == "nvidia-smi-topo" && m.nvlinkSwitched)
        return;
    const int gpus = static_cast<int>(m.gpus.size());
    for (int g = 0; g < gpus; ++g) {
        const ImportedGpu &x = m.gpus[static_cast<std::size_t>(g)];
        if (x.nvlinks <= limit)
            continue;
        std::map<int, int> byCount; // NV# -> cells of this GPU
        for (const ImportedLink &l : m.links)
            if (l.kind == "nvlink" && (l.a == g || l.b == g))
                ++byCount[l.count];
        std::string cells;
        for (auto it = byCount.rbegin(); it != byCount.rend(); ++it)
            cells += (cells.empty() ? "" : ", ") + std::to_string(it->second) + " x NV"
                     + std::to_string(it->first);
        std::string message;
        if (m.format == "nvidia-smi-topo") {
            message = label(m, g) + " row: its NVLink cells (" + cells + ") add up to "
                      + std::to_string(x.nvlinks) + " lanes, but " + allows
                      + ". A direct mesh shares a GPU's lanes among its peers; an NVSwitch board "
                        "shows the same NV# in every GPU cell";
            // One cell off a switched board's common value is the likely culprit.
            std::map<int, int> all;
            int pairs = 0;
            for (const ImportedLink &l : m.links)
                if (l.kind == "nvlink" && l.a < gpus && l.b < gpus) {
                    ++all[l.count];
                    ++pairs;
                }
            const auto common = std::max_element(all.begin(), all.end(), [](auto &a, auto &b) {
                return a.second < b.second;
            });
            if (common != all.end() && pairs == gpus * (gpus - 1) / 2 && common->second * 2 > pairs)
                for (const ImportedLink &l : m.links)
                    if (l.kind == "nvlink" && l.count != common->first && l.a < gpus && l.b < gpus) {
                        message += "; the other GPU pairs read NV" + std::to_string(common->first)
                                   + ": is " + linkName(m, l) + " (" + placeOf(l) + ") wrong?";
                        break;
                    }
        } else {
            message = label(m, g) + ": its <nvlink> counts (" + cells + ") add up to "
                      + std::to_string(x.nvlinks) + " lanes, but " + allows;
        }
        throw InputError(m.file,
                         x.line > 0 ? lineRef(static_cast<std::size_t>(x.line)) : "",
                         message + hint);
    }
}

} // namespace railyard::engine
