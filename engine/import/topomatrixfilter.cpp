#include "import/topomatrixfilter.h"

#include "base/inputerror.h"
#include "import/importtext.h"

#include <algorithm>
#include <map>
#include <set>

namespace railyard::engine {

namespace {

// Largest matrix read: 4096 device columns (issues show 42 NICs; a 256-GPU node is far off).
constexpr std::size_t kMaxDevices = 4096;

bool isGpuLabel(std::string_view s)
{
    return s.size() > 3 && s.substr(0, 3) == "GPU"
           && std::all_of(s.begin() + 3, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The header line: its device labels (tokens before "CPU Affinity"), or an empty list.
std::vector<std::string> headerLabels(const std::string &line)
{
    const auto pos = line.find("CPU Affinity");
    if (pos == std::string::npos)
        return {};
    std::vector<std::string> labels;
    for (const auto f : splitFields(std::string_view(line).substr(0, pos)))
        labels.emplace_back(f);
    if (labels.empty() || !isGpuLabel(labels.front()))
        return {};
    return labels;
}

bool validCell(std::string_view c, int &nv)
{
    nv = 0;
    if (c == "X" || c == "SYS" || c == "NODE" || c == "PHB" || c == "PXB" || c == "PIX"
        || c == "SOC")
        return true;
    if (c.size() > 2 && c.substr(0, 2) == "NV") {
        long long n = 0;
        if (!parseCount(c.substr(2), 1000, n) || n < 1)
            return false;
        nv = static_cast<int>(n);
        return true;
    }
    return false;
}

// The column of `field` (a view into `line`), in characters from 1, as editors count.
int columnOf(const std::string &line, std::string_view field)
{
    const auto offset = static_cast<std::size_t>(field.data() - line.data());
    int column = 1;
    for (std::size_t k = 0; k < offset && k < line.size(); ++k)
        column += (static_cast<unsigned char>(line[k]) & 0xC0) != 0x80;
    return column;
}

std::string place(std::size_t line, int column)
{
    return lineRef(line) + ", column " + std::to_string(column);
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// Closeness of a PCIe relation, nearest first.
int pcieRank(const std::string &code)
{
    static const std::map<std::string, int> rank
            = {{"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}, {"SOC", 4}};
    const auto it = rank.find(code);
    return it == rank.end() ? 5 : it->second;
}

} // namespace

bool TopoMatrixFilter::sniff(const std::vector<std::string> &lines)
{
    for (std::size_t i = 0; i < lines.size() && i < 400; ++i)
        if (!headerLabels(lines[i]).empty())
            return true;
    return false;
}

ImportedMachine TopoMatrixFilter::read(const std::vector<std::string> &lines,
                                       const std::string &file)
{
    ImportedMachine m;
    m.format = "nvidia-smi-topo";
    m.file = file;
    std::size_t headerAt = lines.size();
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        labels = headerLabels(lines[i]);
        if (!labels.empty()) {
            headerAt = i;
            break;
        }
    }
    if (labels.empty())
        throw InputError(file,
                         "line 1",
                         "no topology header: expected a line naming GPU0 ... and \"CPU "
                         "Affinity\" (nvidia-smi topo -m)");
    const std::string &header = lines[headerAt];
    const std::size_t hdrLine = headerAt + 1;
    if (labels.size() > kMaxDevices)
        throw InputError(file,
                         lineRef(hdrLine),
                         std::to_string(labels.size()) + " device columns; at most "
                                 + std::to_string(kMaxDevices) + " are read");
    const bool hasNuma = header.find("NUMA Affinity") != std::string::npos;
    const bool hasGpuNuma = header.find("GPU NUMA ID") != std::string::npos;
    if (!hasNuma)
        m.notes.push_back("no NUMA Affinity column (an older driver)");

    const std::size_t d = labels.size();
    std::size_t gpuCols = 0;
    while (gpuCols < d && isGpuLabel(labels[gpuCols]))
        ++gpuCols;
    std::map<std::string, std::size_t> column;
    for (std::size_t c = 0; c < d; ++c) {
        if (c >= gpuCols && isGpuLabel(labels[c]))
            throw InputError(file,
                             lineRef(hdrLine),
                             "column " + quote(labels[c])
                                     + " follows a NIC column; GPU columns come first");
        if (!column.emplace(labels[c], c).second)
            throw InputError(file,
                             lineRef(hdrLine),
                             "column " + quote(labels[c]) + " appears twice");
    }

    // The matrix: one row per label, in any order; rows end at the first line that is not one.
    std::vector<std::string> cells(d * d);
    std::vector<int> cellColumn(d * d, 0);
    std::vector<std::size_t> rowLine(d, 0);
    std::vector<bool> seen(d, false);
    std::vector<std::vector<std::string_view>> extra(d);
    std::vector<std::string> extraText(d);
    std::size_t i = headerAt + 1;
    for (; i < lines.size(); ++i) {
        const auto f = splitFields(lines[i]);
        if (f.empty())
            break;
        const auto it = column.find(std::string(f[0]));
        if (it == column.end())
            break;
        const std::size_t r = it->second;
        const std::string where = lineRef(i + 1);
        if (seen[r])
            throw InputError(file, where, "row " + quote(f[0]) + " appears twice");
        seen[r] = true;
        if (f.size() < d + 1)
            throw InputError(file,
                             where,
                             "row " + quote(f[0]) + " has " + std::to_string(f.size() - 1)
                                     + (f.size() == 2 ? " cell" : " cells") + "; the header names "
                                     + std::to_string(d) + " devices (is the paste cut short?)");
        rowLine[r] = i + 1;
        for (std::size_t c = 0; c < d; ++c) {
            int nv = 0;
            const int column = columnOf(lines[i], f[c + 1]);
            if (!validCell(f[c + 1], nv))
                throw InputError(file,
                                 place(i + 1, column),
                                 "cell " + quote(f[c + 1]) + " under " + quote(labels[c])
                                         + ": expected X, NV#, PIX, PXB, PHB, NODE, SYS or SOC");
            if ((f[c + 1] == "X") != (c == r))
                throw InputError(file,
                                 place(i + 1, column),
                                 c == r ? "expected X where " + quote(labels[r]) + " meets itself"
                                        : "X under " + quote(labels[c]) + " off the diagonal");
            cells[r * d + c] = std::string(f[c + 1]);
            cellColumn[r * d + c] = column;
        }
        if (r < gpuCols) {
            const std::size_t rest = f.size() - d - 1;
            ImportedGpu g;
            g.label = labels[r];
            g.line = static_cast<int>(i + 1);
            if (rest >= 1)
                g.cpuAffinity = std::string(f[d + 1]);
            if (hasNuma && rest >= 2)
                g.numaAffinity = std::string(f[d + 2]);
            long long numa = 0;
            if (parseCount(g.numaAffinity, 1 << 20, numa))
                g.numa = static_cast<int>(numa);
            (void)hasGpuNuma;
            m.gpus.push_back(g);
            m.gpus.back().label = labels[r];
        }
    }
    for (std::size_t r = 0; r < d; ++r)
        if (!seen[r])
            throw InputError(file,
                             lineRef(i + 1),
                             "no row for " + quote(labels[r])
                                     + " (the matrix is cut short or a row is damaged)");
    // Rows may come in any order; put GPUs in column order.
    std::vector<ImportedGpu> gpus(gpuCols);
    for (ImportedGpu &g : m.gpus)
        gpus[column[g.label]] = std::move(g);
    m.gpus = std::move(gpus);

    // The legend and NIC legend after the matrix: NICn -> device name.
    std::map<std::string, std::string> nicNames;
    bool legend = false;
    for (std::size_t k = i; k < lines.size(); ++k) {
        const std::string &l = lines[k];
        if (l.find("Legend:") != std::string::npos)
            legend = true;
        const auto f = splitFields(l);
        if (f.size() == 2 && f[0].size() > 4 && f[0].substr(0, 3) == "NIC" && f[0].back() == ':')
            nicNames[std::string(f[0].substr(0, f[0].size() - 1))] = std::string(f[1]);
    }
    if (!legend)
        m.notes.push_back("no Legend after the matrix (a truncated paste); codes read as "
                          "nvidia-smi defines them");

    for (std::size_t c = gpuCols; c < d; ++c) {
        ImportedNic n;
        n.label = labels[c];
        const auto it = nicNames.find(labels[c]);
        n.name = it != nicNames.end() ? it->second : labels[c];
        int best = 5;
        for (std::size_t g = 0; g < gpuCols; ++g) {
            const int rank = pcieRank(cells[g * d + c]);
            if (rank < best && rank < 4) {
                best = rank;
                n.nearestGpu = static_cast<int>(g);
                n.nearestPath = cells[g * d + c];
            }
        }
        if (n.nearestGpu >= 0)
            n.numa = m.gpus[static_cast<std::size_t>(n.nearestGpu)].numa;
        m.nics.push_back(n);
    }
    if (!nicNames.empty() && nicNames.size() != d - gpuCols)
        m.notes.push_back("the NIC Legend names " + std::to_string(nicNames.size())
                          + " NICs; the matrix has " + std::to_string(d - gpuCols));

    // A relation reads the same from both ends. Where it does not, one cell is wrong. An NVLink
    // cell that disagrees is refused: the lanes are priced as read, so a wrong NV# prices the
    // server too fast or too slow, and nothing says which cell is right. A PCIe code that
    // disagrees (PIX against NODE) only moves a device to another PCIe switch in the drawing
    // and the NIC's host link: the upper triangle is used and a note names the first cell.
    const auto cellName = [&](std::size_t r, std::size_t c) {
        return echo(labels[r], 30) + " row, column " + echo(labels[c], 30) + ": "
               + cells[r * d + c];
    };
    const auto cellPlace = [&](std::size_t r, std::size_t c) {
        return place(rowLine[r], cellColumn[r * d + c]);
    };
    int asymmetric = 0;
    std::string firstAsymmetric;
    for (std::size_t r = 0; r < d; ++r)
        for (std::size_t c = r + 1; c < d; ++c) {
            const std::string &v = cells[r * d + c], &w = cells[c * d + r];
            if (v == w)
                continue;
            if (v.rfind("NV", 0) == 0 || w.rfind("NV", 0) == 0)
                throw InputError(file,
                                 cellPlace(r, c),
                                 cellName(r, c) + ", but " + cellName(c, r) + " (" + cellPlace(c, r)
                                         + "): a link reads the same from both ends, so one of "
                                           "the two cells is wrong");
            if (asymmetric++ == 0)
                firstAsymmetric = cellName(r, c) + " at " + cellPlace(r, c) + ", but "
                                  + cellName(c, r);
        }

    // Links: each unordered pair once, by the upper triangle.
    for (std::size_t r = 0; r < d; ++r)
        for (std::size_t c = r + 1; c < d; ++c) {
            const std::string &v = cells[r * d + c];
            ImportedLink l;
            l.a = static_cast<int>(r);
            l.b = static_cast<int>(c);
            l.line = static_cast<int>(rowLine[r]);
            l.column = cellColumn[r * d + c];
            if (v.rfind("NV", 0) == 0) {
                l.kind = "nvlink";
                int nv = 0;
                validCell(v, nv);
                l.count = nv;
            } else {
                l.kind = lower(v);
            }
            m.links.push_back(l);
        }
    if (asymmetric > 0)
        m.notes.push_back(std::to_string(asymmetric)
                          + " device pair(s) read differently across the diagonal (first: "
                          + firstAsymmetric + "); the upper triangle was used");

    // NVLink lanes per GPU: an NVSwitch fabric shows every pair at the same NV# (the GPU's lanes
    // into the fabric); a direct mesh shows each pair's own link count.
    std::set<int> nvValues;
    int nvPairs = 0;
    for (const ImportedLink &l : m.links)
        if (l.kind == "nvlink") {
            nvValues.insert(l.count);
            ++nvPairs;
        }
    const int gpuPairs = static_cast<int>(gpuCols * (gpuCols - 1) / 2);
    m.nvlinkSwitched = gpuCols > 1 && nvPairs == gpuPairs && nvValues.size() == 1
                       && (*nvValues.begin() >= 8
                           || static_cast<int>(gpuCols) > 4 * (*nvValues.begin()));
    for (std::size_t g = 0; g < gpuCols; ++g) {
        int lanes = 0;
        for (const ImportedLink &l : m.links)
            if (l.kind == "nvlink" && (l.a == static_cast<int>(g) || l.b == static_cast<int>(g)))
                lanes = m.nvlinkSwitched ? l.count : lanes + l.count;
        m.gpus[g].nvlinks = lanes;
    }
    if (nvPairs > 0 && nvPairs < gpuPairs)
        m.notes.push_back(std::to_string(gpuPairs - nvPairs) + " of " + std::to_string(gpuPairs)
                          + " GPU pairs have no NVLink (a direct mesh, or links missing)");

    std::set<std::string> numas;
    for (const ImportedGpu &g : m.gpus)
        if (!g.numaAffinity.empty() && g.numaAffinity != "N/A")
            numas.insert(g.numaAffinity);
        else if (!g.cpuAffinity.empty() && g.cpuAffinity != "N/A")
            numas.insert("cpu:" + g.cpuAffinity);
    m.numaNodes = static_cast<int>(numas.size());
    return m;
}

} // namespace railyard::engine
