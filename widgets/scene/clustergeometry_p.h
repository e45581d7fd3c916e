#pragma once

// Helpers shared by the ClusterGeometry files (placement, routes and hit testing).
#include <span>
#include <utility>
#include <vector>

namespace railyard::geometry_detail {

inline constexpr double kServerPad = 14; // inside a server box

template<typename T>
std::span<const T> rowSpan(const std::vector<int> &start, const std::vector<T> &data, int i)
{
    if (i < 0 || i + 1 >= static_cast<int>(start.size()))
        return {};
    const int b = start[static_cast<std::size_t>(i)];
    const int e = start[static_cast<std::size_t>(i) + 1];
    return {data.data() + b, static_cast<std::size_t>(e - b)};
}

// Compressed rows from (row, value) pairs.
inline void buildCsr(int rows,
                     const std::vector<std::pair<int, int>> &pairs,
                     std::vector<int> &start,
                     std::vector<int> &data)
{
    start.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto &p : pairs)
        ++start[static_cast<std::size_t>(p.first) + 1];
    for (std::size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    data.assign(pairs.size(), 0);
    std::vector<int> fill(start.begin(), start.end() - 1);
    for (const auto &p : pairs)
        data[static_cast<std::size_t>(fill[static_cast<std::size_t>(p.first)]++)] = p.second;
}

} // namespace railyard::geometry_detail
