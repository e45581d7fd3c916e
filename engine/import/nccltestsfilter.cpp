#include "import/nccltestsfilter.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "import/importtext.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace railyard::engine {

namespace {

// Sizes and times beyond these are not measurements (1 PiB buffers, a day per iteration,
// 100 TB/s per GPU).
constexpr double kMaxSize = 1.2e15;
constexpr double kMaxTimeUs = 8.64e10;
constexpr double kMaxBandwidth = 1e8;
constexpr std::size_t kMaxRows = 100000;
constexpr int kMaxRanks = 1 << 20;

// Removes an srun/mpirun task label: " 0: ", "12: ".
std::string_view stripTaskLabel(std::string_view l)
{
    std::size_t i = 0;
    while (i < l.size() && l[i] == ' ')
        ++i;
    const std::size_t digits = i;
    while (i < l.size() && l[i] >= '0' && l[i] <= '9')
        ++i;
    if (i > digits && i - digits <= 6 && i < l.size() && l[i] == ':'
        && (i + 1 == l.size() || l[i + 1] == ' '))
        return l.substr(i + 1);
    return l;
}

std::string canonicalOp(std::string_view binary)
{
    static const std::pair<const char *, const char *> names[] = {
            {"all_reduce", "all_reduce"},
            {"allreduce", "all_reduce"},
            {"all_gather", "all_gather"},
            {"allgather", "all_gather"},
            {"reduce_scatter", "reduce_scatter"},
            {"reducescatter", "reduce_scatter"},
            {"alltoall", "alltoall"},
            {"all_to_all", "alltoall"},
            {"broadcast", "broadcast"},
            {"sendrecv", "sendrecv"},
            {"hypercube", "hypercube"},
            {"gather", "gather"},
            {"scatter", "scatter"},
            {"reduce", "reduce"},
    };
    std::string lower(binary);
    for (char &c : lower)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    for (const auto &[key, op] : names)
        if (lower.find(key) != std::string::npos)
            return op;
    return {};
}

// A line that starts as a result row does: size and count, both whole numbers. Whether it is
// a whole row is parseRow's question.
bool startsLikeDataRow(const std::vector<std::string_view> &f)
{
    long long n = 0;
    return f.size() >= 2 && parseCount(f[0], std::numeric_limits<long long>::max(), n)
           && parseCount(f[1], std::numeric_limits<long long>::max(), n);
}

bool isDataRow(const std::vector<std::string_view> &f)
{
    return f.size() >= 13 && startsLikeDataRow(f);
}

// Reads one result row into its out-of-place and in-place halves; returns what is wrong with
// it (empty: nothing). size count type redop root | time algbw busbw #wrong | the same again.
std::string parseRow(const std::vector<std::string_view> &f, int line, Measurement half[2])
{
    if (f.size() < 13)
        return std::to_string(f.size())
               + " fields; a result row has 13 (size, count, type, "
                 "redop, root, then time, algbw, busbw, #wrong twice)";
    std::string problem;
    const auto number = [&](std::string_view text, const char *what, double max) {
        double v = 0;
        if (!problem.empty())
            return v;
        if (!parseFiniteDouble(text, v))
            problem = std::string(what) + " " + quote(text) + ": expected a finite number";
        else if (v < 0 || v > max)
            problem = std::string(what) + " " + quote(text) + " is out of range (0 to "
                      + formatNumber(max) + ")";
        return v;
    };
    Measurement base;
    base.line = line;
    base.sizeBytes = number(f[0], "size", kMaxSize);
    base.count = number(f[1], "count", kMaxSize);
    base.type = std::string(f[2]);
    base.redop = std::string(f[3]);
    double root = 0;
    if (problem.empty() && (!parseFiniteDouble(f[4], root) || root < -1 || root > kMaxRanks))
        problem = "root " + quote(f[4]) + ": expected -1 or a rank";
    base.root = problem.empty() ? static_cast<int>(root) : -1;
    for (int h = 0; h < 2; ++h) {
        Measurement &x = half[h];
        x = base;
        x.inPlace = h == 1;
        const std::size_t o = 5 + 4 * static_cast<std::size_t>(h);
        x.timeUs = number(f[o], "time", kMaxTimeUs);
        x.algbwGBps = number(f[o + 1], "algbw", kMaxBandwidth);
        x.busbwGBps = number(f[o + 2], "busbw", kMaxBandwidth);
        double wrong = 0;
        if (problem.empty() && f[o + 3] != "N/A"
            && (!parseFiniteDouble(f[o + 3], wrong) || wrong < 0))
            problem = "#wrong " + quote(f[o + 3]) + ": expected a count or N/A";
    }
    return problem;
}

} // namespace

bool NcclTestsFilter::sniff(const std::vector<std::string> &lines)
{
    int rows = 0;
    for (std::size_t i = 0; i < lines.size() && i < 2000; ++i) {
        const std::string_view l = stripTaskLabel(lines[i]);
        if (l.find("nThread") != std::string_view::npos && l.find("nGpus") != std::string_view::npos)
            return true;
        if (l.find("busbw") != std::string_view::npos && l.find("algbw") != std::string_view::npos)
            return true;
        if (isDataRow(splitFields(l)) && ++rows >= 2)
            return true;
    }
    return false;
}

ImportedMachine NcclTestsFilter::read(const std::vector<std::string> &lines, const std::string &file)
{
    ImportedMachine m;
    m.format = "nccl-tests";
    m.file = file;
    std::string op;
    int nGpus = 0, nThread = 1;
    std::map<std::string, int> hostIndex;
    std::string gpuModel;
    bool header = false;
    int damaged = 0;
    std::size_t firstDamagedLine = 0;
    std::string firstDamaged;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string where = lineRef(i + 1);
        std::string_view l = stripTaskLabel(lines[i]);
        const auto f = splitFields(l);
        if (f.empty())
            continue;
        if (op.empty()) {
            // "# Collective test starting: all_gather_perf", "+ srun ... all_reduce_perf_mpi".
            for (const auto &w : f)
                if (w.find("_perf") != std::string_view::npos)
                    op = canonicalOp(w);
        }
        const bool comment = f[0] == "#" || f[0][0] == '#';
        if (comment || f[0] == "nThread" || f[0] == "Rank") {
            std::vector<std::string_view> g(f.begin() + (f[0] == "#" ? 1 : 0), f.end());
            if (!g.empty() && g[0].size() > 1 && g[0][0] == '#')
                g[0].remove_prefix(1);
            if (g.size() >= 4 && g[0] == "nThread") {
                header = true;
                long long v = 0;
                if (parseCount(g[1], 4096, v))
                    nThread = static_cast<int>(std::max(1LL, v));
                if (g[2] == "nGpus" && parseCount(g[3], 4096, v))
                    nGpus = static_cast<int>(v);
            } else if (g.size() >= 9 && g[0] == "Rank") {
                // Rank R Group G Pid P on HOST device D [bus] NAME...
                const auto on = std::find(g.begin(), g.end(), std::string_view("on"));
                if (on != g.end() && on + 1 != g.end()) {
                    if (m.gpus.size() >= static_cast<std::size_t>(kMaxRanks))
                        throw InputError(file,
                                         where,
                                         "more than " + std::to_string(kMaxRanks) + " ranks");
                    const std::string host(*(on + 1));
                    if (hostIndex.emplace(host, static_cast<int>(m.hosts.size())).second)
                        m.hosts.push_back(host);
                    ImportedGpu gpu;
                    gpu.host = host;
                    auto it = on + 2;
                    if (it != g.end() && *it == "device" && it + 1 != g.end()) {
                        gpu.label = "GPU" + std::string(*(it + 1));
                        it += 2;
                    }
                    if (it != g.end() && it->front() == '[') {
                        std::string_view bus = it->substr(1);
                        if (!bus.empty() && bus.back() == ']')
                            bus.remove_suffix(1);
                        gpu.busId = std::string(bus);
                        ++it;
                    }
                    std::string name;
                    for (; it != g.end(); ++it)
                        name += (name.empty() ? "" : " ") + std::string(*it);
                    gpu.model = name;
                    if (gpuModel.empty())
                        gpuModel = name;
                    m.gpus.push_back(gpu);
                }
            }
            continue;
        }
        if (!startsLikeDataRow(f))
            continue;
        Measurement half[2];
        if (std::string problem = parseRow(f, static_cast<int>(i + 1), half); !problem.empty()) {
            // Damaged (cut short, a field overwritten): skipped, counted, the first one named.
            if (damaged++ == 0) {
                firstDamagedLine = i + 1;
                firstDamaged = problem;
            }
            continue;
        }
        if (m.measurements.size() >= 2 * kMaxRows)
            throw InputError(file, where, "more than " + std::to_string(kMaxRows) + " rows");
        m.measurements.push_back(half[0]);
        m.measurements.push_back(half[1]);
        // alltoall's in-place #wrong is always N/A; all_gather's is a count when validating.
        if (f[12] == "N/A" && f[8] != "N/A")
            m.notes.push_back("alltoall-marker");
    }
    if (m.measurements.empty() && damaged > 0)
        throw InputError(file,
                         lineRef(firstDamagedLine),
                         firstDamaged
                                 + (damaged == 1 ? " (the only result row, damaged"
                                                 : " (the first of " + std::to_string(damaged)
                                                           + " result rows, all damaged")
                                 + ": no usable result rows)");
    if (damaged > 0)
        m.notes.push_back(
                std::to_string(damaged) + (damaged == 1 ? " damaged row" : " damaged rows")
                + " skipped (first at " + lineRef(firstDamagedLine) + ": " + firstDamaged + ")");
    if (m.measurements.empty())
        throw InputError(file,
                         lineRef(lines.size()),
                         header ? "no result rows after the header (the run failed or the log is "
                                  "cut short)"
                                : "no nccl-tests result rows: expected lines of size, count, type, "
                                  "redop, root, then time, algbw, busbw, #wrong twice");
    const bool alltoallMarker = std::find(m.notes.begin(), m.notes.end(), "alltoall-marker")
                                != m.notes.end();
    m.notes.erase(std::remove(m.notes.begin(), m.notes.end(), "alltoall-marker"), m.notes.end());

    m.ranks = !m.gpus.empty() ? static_cast<int>(m.gpus.size()) : std::max(1, nGpus * nThread);
    if (m.gpus.empty()) {
        m.notes.push_back("no \"Using devices\" lines: " + std::to_string(m.ranks)
                          + " rank(s) on one host assumed");
        for (int r = 0; r < m.ranks; ++r) {
            ImportedGpu g;
            g.label = "GPU" + std::to_string(r);
            m.gpus.push_back(g);
        }
    }
    for (const ImportedGpu &g : m.gpus)
        if (!g.host.empty() && m.gpus.size() % std::max<std::size_t>(1, m.hosts.size()) != 0) {
            m.notes.push_back("hosts have different numbers of ranks");
            break;
        }

    // The collective: as the log names it, else from the row's shape and the bus factor.
    const Measurement &ref = *m.largest();
    if (op.empty()) {
        const double n = m.ranks;
        const double ratio = ref.algbwGBps > 0 ? ref.busbwGBps / ref.algbwGBps : 0;
        const bool reducing = ref.redop != "none";
        if (ref.root >= 0)
            op = reducing ? "reduce" : "broadcast";
        else if (!reducing)
            op = alltoallMarker ? "alltoall" : "all_gather";
        else if (n > 1 && std::fabs(ratio - 2 * (n - 1) / n) < 0.05)
            op = "all_reduce";
        else if (n > 1 && std::fabs(ratio - (n - 1) / n) < 0.05)
            op = "reduce_scatter";
        else if (std::fabs(ratio - 1) < 0.05)
            op = "sendrecv";
        else
            op = canonicalOp(file);
        if (op.empty())
            op = "all_reduce";
        m.notes.push_back("the log does not name its test; read as " + op + " from its columns");
    }
    m.collective = op;
    for (Measurement &x : m.measurements)
        x.op = op;
    return m;
}

} // namespace railyard::engine
