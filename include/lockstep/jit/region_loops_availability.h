// Whether kernels compiled for the cpu device can run as region loops, for
// the Python package's warning (a header of its own: it names nothing else).
#pragma once
#include <string>

namespace lockstep {

// Why kernels with barriers compiled for the cpu device run on fibers rather
// than as region loops because no libclang loads (what is missing, and the
// fix); "" when libclang is there.
std::string region_loops_unavailable_reason();

}  // namespace lockstep
