#pragma once
// A planted violation: base/ is the lowest layer and may not include step/.
#include "step/evaluate.h"
