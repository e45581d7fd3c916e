#pragma once

#include "import/importedmachine.h"

#include <string>
#include <vector>

namespace railyard::engine {

// Reads nccl-tests output (all_reduce_perf, all_gather_perf, alltoall_perf, reduce_scatter_perf,
// broadcast_perf, reduce_perf, sendrecv_perf): the "Using devices" ranks (hosts and GPUs) and
// each table row's out-of-place and in-place size, count, type, time, algbw and busbw. srun task
// labels (" 0: "), MPI and NCCL INFO noise, stray blank lines and old or new header styles are
// accepted; columns pushed out of line by wide numbers are read by field, not by position.
class NcclTestsFilter
{
public:
    static bool sniff(const std::vector<std::string> &lines);
    // `file` names the log in errors; its name is also a hint to the collective when the log
    // does not say it. Throws InputError naming the file and the line.
    static ImportedMachine read(const std::vector<std::string> &lines, const std::string &file);
};

} // namespace railyard::engine
