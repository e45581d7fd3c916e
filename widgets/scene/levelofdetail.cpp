#include "levelofdetail.h"

namespace railyard {

Detail &finestDetail()
{
    static Detail finest = Detail::Labels;
    return finest;
}

PaintStats &paintStats()
{
    static PaintStats stats;
    return stats;
}

} // namespace railyard
