#pragma once
// A planted violation: a folder the include rule has no row for.
