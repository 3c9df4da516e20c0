// Modules of the driver API: a module on the emulator is a shared object of
// emulated kernels (`lockstep nvcc -fatbin`, or lockstep's NVRTC), loaded from
// a file or from memory, whose kernels registered themselves for launches
// through `void** args` when it was loaded (host_source/keywords.cpp).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver_calls.h"
#include "lockstep/emu/launch_api.h"

struct CUfunc_st {
  const void* kernel = nullptr;
  std::string name;
  lockstep::emu::registered_kernel registration;
};

struct CUmod_st {
  void* handle = nullptr;
  int fd = -1;  // the memory file the shared object was loaded from; open while loaded, as messages read its symbols
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

namespace {

using lockstep::emu::as_result;

#if defined(__x86_64__)
constexpr int host_machine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int host_machine = EM_AARCH64;
#else
constexpr int host_machine = EM_NONE;
#endif
constexpr int cuda_machine = 190;  // EM_CUDA: a cubin

void say(const char* call, const std::string& what) { std::fprintf(stderr, "lockstep: %s: %s\n", call, what.c_str()); }

const std::string how_to_build =
    "the emulator loads modules built for it: `lockstep nvcc -fatbin kernels.cu -o kernels.fatbin` (or -cubin, -ptx), or "
    "NVRTC's output in a program built by lockstep nvcc";

// The bytes of a host shared object starting at `image`, from its ELF header
// (the section headers end the file); 0 if the image is not one, with the reason.
std::size_t host_module_size(const void* image, std::string& why) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (std::memcmp(bytes, ELFMAG, SELFMAG) != 0) {
    std::uint32_t magic = 0;
    std::memcpy(&magic, bytes, sizeof magic);
    if (magic == 0xBA55ED50u || magic == 0x466243B1u)
      why = "the image is a GPU fat binary (nvcc's); " + how_to_build;
    else if (std::memchr(bytes, '\0', 4096) && std::strstr(static_cast<const char*>(image), ".version") &&
             std::strstr(static_cast<const char*>(image), ".target"))
      why = "the image is PTX, which the emulator cannot run; " + how_to_build;
    else
      why = "the image is not a module; " + how_to_build;
    return 0;
  }
  Elf64_Ehdr header;
  std::memcpy(&header, bytes, sizeof header);
  if (header.e_machine == cuda_machine) {
    why = "the image is a GPU binary (a cubin); " + how_to_build;
    return 0;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != host_machine || header.e_type != ET_DYN) {
    why = "the image is an ELF file but not a shared object for this machine; " + how_to_build;
    return 0;
  }
  return std::max<std::size_t>(header.e_shoff + std::size_t{header.e_shnum} * header.e_shentsize,
                               header.e_phoff + std::size_t{header.e_phnum} * header.e_phentsize);
}

CUresult load(CUmodule* module, const void* image, const char* call) {
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  std::string why;
  const std::size_t size = host_module_size(image, why);
  if (size == 0) {
    say(call, why);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  // dlopen takes files: the image goes into an anonymous memory file first.
  const int fd = memfd_create("lockstep-module", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  const auto* bytes = static_cast<const char*>(image);
  for (std::size_t written = 0; written < size;) {
    const ssize_t n = write(fd, bytes + written, size - written);
    if (n <= 0) {
      close(fd);
      return CUDA_ERROR_OPERATING_SYSTEM;
    }
    written += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    say(call, std::string("the module could not be loaded: ") + dlerror());
    close(fd);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto* loaded = new CUmod_st;
  loaded->handle = handle;
  loaded->fd = fd;
  *module = loaded;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult cuModuleLoadData(CUmodule* module, const void* image) { return load(module, image, "cuModuleLoadData"); }
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*, void**) {
  return load(module, image, "cuModuleLoadDataEx");
}
CUresult cuModuleLoadFatBinary(CUmodule* module, const void* image) { return load(module, image, "cuModuleLoadFatBinary"); }

CUresult cuModuleLoad(CUmodule* module, const char* path) {
  if (!module || !path) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    say("cuModuleLoad", std::string("cannot read ") + path);
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  image.resize(std::max<std::size_t>(image.size(), 4096) + 1, '\0');  // room for the checks' look at the first bytes
  return load(module, image.data(), "cuModuleLoad");
}

CUresult cuModuleUnload(CUmodule module) {
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  dlclose(module->handle);
  close(module->fd);
  delete module;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (!function || !name) return CUDA_ERROR_INVALID_VALUE;
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  const std::lock_guard lock(module->mutex);
  if (auto found = module->functions.find(name); found != module->functions.end()) {
    *function = found->second.get();
    return CUDA_SUCCESS;
  }
  const void* kernel = dlsym(module->handle, name);
  const lockstep::emu::registered_kernel registration = kernel ? lockstep::emu::registration_of(kernel) : lockstep::emu::registered_kernel{};
  if (!registration.launch) {
    say("cuModuleGetFunction",
        std::string(kernel ? "'" : "no kernel named '") + name +
            (kernel ? "' is not a kernel the module defines (a template's instance is not registered: launch it from the program that defines it)"
                    : "' in the module (a C++ kernel's name is mangled, as _Z6kernelPf; declare it extern \"C\" to find it by its plain name)"));
    return CUDA_ERROR_NOT_FOUND;
  }
  auto entry = std::make_unique<CUfunc_st>(CUfunc_st{kernel, name, registration});
  *function = entry.get();
  module->functions.emplace(name, std::move(entry));
  return CUDA_SUCCESS;
}

namespace {
// A `static __device__` (or __constant__) variable of a module: a local symbol,
// which dlsym does not see but a GPU module names too (the CUDA samples'
// binomialOptions_nvrtc). Found in the symbol table of the module's file.
bool local_variable(const CUmod_st& module, const char* name, CUdeviceptr* ptr, std::size_t* bytes) {
  struct stat st {};
  if (fstat(module.fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) return false;
  std::vector<unsigned char> file(static_cast<std::size_t>(st.st_size));
  if (pread(module.fd, file.data(), file.size(), 0) != static_cast<ssize_t>(file.size())) return false;
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  if (ehdr->e_shoff + std::uint64_t(ehdr->e_shnum) * sizeof(Elf64_Shdr) > file.size()) return false;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file.data() + ehdr->e_shoff);
  link_map* map = nullptr;
  if (dlinfo(module.handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return false;
  // C++ names a variable of internal linkage _ZL<length><name>.
  const std::string internal = "_ZL" + std::to_string(std::strlen(name)) + name;
  for (int i = 0; i < ehdr->e_shnum; ++i) {
    const Elf64_Shdr& table = sections[i];
    if (table.sh_type != SHT_SYMTAB || table.sh_link >= ehdr->e_shnum) continue;
    const Elf64_Shdr& strings = sections[table.sh_link];
    if (table.sh_offset + table.sh_size > file.size() || strings.sh_offset + strings.sh_size > file.size()) return false;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(file.data() + table.sh_offset);
    for (std::size_t k = 0; k < table.sh_size / sizeof(Elf64_Sym); ++k) {
      const Elf64_Sym& sym = symbols[k];
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF || sym.st_name >= strings.sh_size) continue;
      const char* symbol = reinterpret_cast<const char*>(file.data() + strings.sh_offset + sym.st_name);
      if (std::strcmp(symbol, name) != 0 && internal != symbol) continue;
      if (ptr) *ptr = static_cast<CUdeviceptr>(map->l_addr + sym.st_value);
      if (bytes) *bytes = sym.st_size;
      return true;
    }
  }
  return false;
}
}  // namespace

CUresult cuModuleGetGlobal(CUdeviceptr* ptr, std::size_t* bytes, CUmodule module, const char* name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  void* symbol = dlsym(module->handle, name);
  Dl_info info{};
  ElfW(Sym)* entry = nullptr;
  if (!symbol || !dladdr1(symbol, &info, reinterpret_cast<void**>(&entry), RTLD_DL_SYMENT) || !entry || ELF64_ST_TYPE(entry->st_info) != STT_OBJECT) {
    if (local_variable(*module, name, ptr, bytes)) return CUDA_SUCCESS;
    say("cuModuleGetGlobal", std::string("no __device__ or __constant__ variable named '") + name + "' in the module");
    return CUDA_ERROR_NOT_FOUND;
  }
  if (ptr) *ptr = reinterpret_cast<CUdeviceptr>(symbol);
  if (bytes) *bytes = entry->st_size;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char** name, CUfunction function) {
  if (!name || !function) return CUDA_ERROR_INVALID_VALUE;
  *name = function->name.c_str();
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  cudaFuncAttributes a{};
  if (const cudaError_t e = cudaFuncGetAttributes(&a, function->kernel); e != cudaSuccess) return as_result(e);
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = a.maxThreadsPerBlock;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *value = static_cast<int>(a.sharedSizeBytes);
      break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      *value = static_cast<int>(a.constSizeBytes);
      break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
      *value = static_cast<int>(a.localSizeBytes);
      break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *value = a.numRegs;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      *value = a.ptxVersion;
      break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *value = a.binaryVersion;
      break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      *value = a.cacheModeCA;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *value = a.maxDynamicSharedSizeBytes;
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      *value = a.preferredShmemCarveout;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  return as_result(cudaFuncSetAttributeForKernel(function->kernel, static_cast<cudaFuncAttribute>(attribute), value));
}

CUresult cuFuncSetCacheConfig(CUfunction function, CUfunc_cache config) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  return as_result(cudaFuncSetCacheConfig(function->kernel, static_cast<cudaFuncCache>(config)));
}

namespace {

// The argument pointers of a launch: `params` as given, or pointers into the
// packed buffer that `extra` names, each parameter at its alignment.
CUresult arguments_of(const CUfunc_st& function, void** params, void** extra, std::vector<void*>& arguments, void**& args) {
  const lockstep::emu::kernel_parameters& p = function.registration.parameters;
  if (params && extra) return CUDA_ERROR_INVALID_VALUE;
  if (params || p.count == 0) {
    args = params;
    return CUDA_SUCCESS;
  }
  if (!extra) {
    say("cuLaunchKernel", function.name + " takes " + std::to_string(p.count) + " parameters, but neither kernelParams nor extra gives them");
    return CUDA_ERROR_INVALID_VALUE;
  }
  char* buffer = nullptr;
  std::size_t buffer_size = 0;
  bool sized = false;
  for (void** e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
    if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = static_cast<char*>(e[1]);
    else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1]) {
      buffer_size = *static_cast<std::size_t*>(e[1]);
      sized = true;
    } else
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (!buffer || !sized) return CUDA_ERROR_INVALID_VALUE;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < p.count; ++i) {
    offset = (offset + p.alignments[i] - 1) / p.alignments[i] * p.alignments[i];
    arguments.push_back(buffer + offset);
    offset += p.sizes[i];
  }
  // A shorter buffer the H100 launches with whatever lies beyond it; the emulator refuses it.
  if (offset > buffer_size) {
    say("cuLaunchKernel",
        "the argument buffer holds " + std::to_string(buffer_size) + " bytes, but " + function.name + "'s parameters take " + std::to_string(offset));
    return CUDA_ERROR_INVALID_VALUE;
  }
  args = arguments.data();
  return CUDA_SUCCESS;
}

CUresult launch(CUfunction function, dim3 grid, dim3 block, unsigned int shared_bytes, CUstream stream, void** params, void** extra, bool cooperative,
                const char* call) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<void*> arguments;
  void** args = nullptr;
  if (const CUresult r = arguments_of(*function, params, extra, arguments, args); r != CUDA_SUCCESS) return r;
  return as_result(lockstep::emu::launch_registered(function->kernel, {grid, block, shared_bytes, stream, cooperative}, args, call));
}

}  // namespace

CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
                        unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream, void** params, void** extra) {
  return launch(function, dim3(grid_x, grid_y, grid_z), dim3(block_x, block_y, block_z), shared_bytes, stream, params, extra, false,
                "cuLaunchKernel");
}

CUresult cuLaunchCooperativeKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
                                   unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream, void** params) {
  return launch(function, dim3(grid_x, grid_y, grid_z), dim3(block_x, block_y, block_z), shared_bytes, stream, params, nullptr, true,
                "cuLaunchCooperativeKernel");
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction function, int block_size, std::size_t dynamic_shared_bytes) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  return as_result(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, function->kernel, block_size, dynamic_shared_bytes, 0));
}

CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, CUfunction function, CUoccupancyB2DSize shared_for_block_size,
                                          std::size_t dynamic_shared_bytes, int block_size_limit) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  struct shared_rule {
    CUoccupancyB2DSize per_block_size;
    std::size_t fixed;
  } rule{shared_for_block_size, dynamic_shared_bytes};
  std::size_t (*shared_for)(int, const void*) = [](int size, const void* r) {
    const auto* s = static_cast<const shared_rule*>(r);
    return s->per_block_size ? s->per_block_size(size) : s->fixed;
  };
  return as_result(lockstep::emu::max_potential_block_size(min_grid_size, block_size, function->kernel, shared_for, &rule, block_size_limit, 0));
}
