#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railyard::engine {

// "14GB", "8GiB", "512 KiB", "1e9", "1.5MB". B, KB, MB, GB, TB are powers of 1000 (as nccl-tests
// prints); KiB, MiB, GiB, TiB powers of 1024. A bare number is bytes. Throws InputError.
std::uint64_t parseSize(std::string_view text);

// "0-7,16,20-23" -> {0..7, 16, 20..23}, in the order written, duplicates refused. Throws
// InputError; indices must be below `limit`.
std::vector<int> parseIndexList(std::string_view text, int limit);
// The same list's ranges ({0, 7}, {16, 16}, {20, 23}), whatever the cluster: throws InputError
// when the text is not a list (a bad number, an empty item, a range that runs backwards, an
// index listed twice). What parseIndexList adds is only the check against `limit`.
std::vector<std::pair<int, int>> parseIndexRanges(std::string_view text);

// 14000000000 -> "14 GB", 8589934592 -> "8 GiB"; picks the unit that gives a short number.
std::string formatBytes(double bytes);
// 0.0681 -> "68.1 ms", 2.5e-6 -> "2.5 µs", 12.3 -> "12.3 s".
std::string formatSeconds(double seconds);
// A number with `digits` significant digits, no trailing zeros.
std::string formatNumber(double value, int digits = 3);

} // namespace railyard::engine
