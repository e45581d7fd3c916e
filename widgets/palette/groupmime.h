#pragma once

#include "document/groupref.h"

#include <QString>

#include <optional>

class QMimeData;

namespace railyard::mime {

// What a drag onto the canvas carries: a group chip from the palette, or a GPU dragged to swap
// its rank with another's. Both name the job they were made for (jobSignature), since group 3
// of another job, or a GPU of another cluster, means something else.
inline constexpr char kGroupType[] = "application/x-railyard-group";
inline constexpr char kGpuType[] = "application/x-railyard-gpu";

struct GroupDrag
{
    GroupRef group;
    QString job;
};
struct GpuDrag
{
    int gpu = -1;
    QString job;
};

// The caller owns the result (QDrag takes it).
QMimeData *encodeGroup(const GroupRef &group, const QString &job);
QMimeData *encodeGpu(int gpu, const QString &job);
std::optional<GroupDrag> decodeGroup(const QMimeData *data);
std::optional<GpuDrag> decodeGpu(const QMimeData *data);
// Whether the canvas can take it at all (else the drag is ignored without a message).
bool isRailyardDrag(const QMimeData *data);

} // namespace railyard::mime
