// A separate process for the JIT tests: jit_compile_child SOURCE_FILE DEVICE
// compiles the source for the device, launches `fill` once, checks the result
// and prints "ok hit" or "ok miss" (whether the module came from the disk cache).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "lockstep/runtime.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::ifstream in(argv[1]);
  std::stringstream source;
  source << in.rdbuf();
  try {
    const lockstep::device d = lockstep::device::parse(argv[2]);
    lockstep::module m = lockstep::compile(source.str(), {}, d);
    lockstep::buffer out(d, 100 * sizeof(int));
    m.get("fill")(dim3(1), dim3(100), 0, out.data_as<int>(), 7);
    for (int v : out.to_host<int>())
      if (v != 7) return 3;
    std::printf("ok %s\n", m.from_cache() ? "hit" : "miss");
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
