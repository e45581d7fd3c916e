#pragma once
// Two planted violations: an engine header without its folder, and a Qt header.
#include "units.h"
#include <QString>
