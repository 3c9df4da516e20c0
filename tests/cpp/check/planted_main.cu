// planted CASE [fixed]: runs one planted bug (or, with `fixed`, its correct
// twin) from planted_kernels.cuh; `planted` alone lists the cases.
//
// The same file runs on the emulator in check mode (lockstep-check
// planted_main.cu CASE) and on a GPU under compute-sanitizer, built by nvcc:
//   nvcc -std=c++20 -arch=sm_90 -g -lineinfo -I include tests/cpp/check/planted_main.cu -o planted
//   compute-sanitizer --tool racecheck ./planted missing_barrier_after_read
#include <cstdio>
#include <cstring>
#include <exception>

#include "planted_kernels.cuh"

int main(int argc, char** argv) {
  const bool fixed = argc == 3 && std::strcmp(argv[2], "fixed") == 0;
  if (argc >= 2 && argc <= 3 && (argc == 2 || fixed))
    for (const planted::planted_case& c : planted::cases())
      if (std::strcmp(c.name, argv[1]) == 0) {
        try {
          c.run(!fixed);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          return 1;
        }
        std::printf("%s (%s): ran to the end\n", c.name, fixed ? "fixed" : "with its bug");
        return 0;
      }
  std::fprintf(stderr, "usage: %s CASE [fixed]\ncases (the checker that should find each):\n", argv[0]);
  for (const planted::planted_case& c : planted::cases()) std::fprintf(stderr, "  %-30s %s\n", c.name, c.tool);
  return 2;
}
