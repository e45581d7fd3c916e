#pragma once
// Allowed: step/ may include layout/ and base/.
#include "layout/layout.h"
#include "base/units.h"
