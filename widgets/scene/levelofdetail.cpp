#include "levelofdetail.h"

namespace railyard {

PaintStats &paintStats()
{
    static PaintStats stats;
    return stats;
}

} // namespace railyard
