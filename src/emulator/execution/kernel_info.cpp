#include "kernel_info.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace lockstep::emu {
namespace {

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

// "void ns::k<16>(float*, int)::tile" -> "ns::k<16>::tile": the name of a
// function-local static without the function's return and parameter types.
std::string short_local_name(const std::string& demangled) {
  const std::size_t var = demangled.rfind("::");
  if (var == std::string::npos || var == 0 || demangled[var - 1] != ')') return demangled;
  int depth = 0;
  std::size_t open = var - 1;
  for (std::size_t i = var; i-- > 0;) {
    depth += demangled[i] == ')' ? 1 : demangled[i] == '(' ? -1 : 0;
    if (depth == 0) {
      open = i;
      break;
    }
  }
  std::size_t begin = 0;
  depth = 0;
  for (std::size_t i = 0; i < open; ++i) {
    depth += demangled[i] == '<' ? 1 : demangled[i] == '>' ? -1 : 0;
    if (depth == 0 && demangled[i] == ' ') begin = i + 1;
  }
  return demangled.substr(begin, open - begin) + demangled.substr(var);
}

// The prefix of the symbols of local statics inside function `symbol`.
std::string local_static_prefix(const std::string& symbol) {
  const std::string prefix = "_ZZ";  // (std::string + std::string: GCC 12 warns wrongly about "literal" + std::string)
  if (symbol.rfind("_Z", 0) == 0) return prefix + symbol.substr(2) + "E";
  return prefix + std::to_string(symbol.size()) + symbol + "E";  // extern "C" kernel
}

class mapped_file {
 public:
  explicit mapped_file(const char* path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    close(fd);
  }
  ~mapped_file() {
    if (data_) munmap(const_cast<unsigned char*>(data_), size_);
  }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Reads the kernel's symbol and its static shared arrays from the ELF file
// that holds it. Leaves `info` as it is when the file has no symbol table.
void read_elf_symbols(const void* kernel, kernel_info& info) {
  Dl_info dl{};
  if (!dladdr(kernel, &dl)) return;
  info.module_path = dl.dli_fname && *dl.dli_fname ? dl.dli_fname : "/proc/self/exe";
  mapped_file file(info.module_path.c_str());
  if (!file.data() || file.size() < sizeof(Elf64_Ehdr)) return;
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  if (std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64) return;
  if (ehdr->e_phoff + std::uint64_t(ehdr->e_phnum) * sizeof(Elf64_Phdr) <= file.size()) {
    const auto* segments = reinterpret_cast<const Elf64_Phdr*>(file.data() + ehdr->e_phoff);
    for (int i = 0; i < ehdr->e_phnum; ++i)
      if (segments[i].p_type == PT_TLS) info.module_tls_bytes = segments[i].p_memsz;
  }
  if (ehdr->e_shoff + std::uint64_t(ehdr->e_shnum) * sizeof(Elf64_Shdr) > file.size()) return;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file.data() + ehdr->e_shoff);
  const Elf64_Shdr* symtab = nullptr;
  for (int i = 0; i < ehdr->e_shnum; ++i)
    if (sections[i].sh_type == SHT_SYMTAB) symtab = &sections[i];
  if (!symtab)
    for (int i = 0; i < ehdr->e_shnum; ++i)
      if (sections[i].sh_type == SHT_DYNSYM) symtab = &sections[i];
  if (!symtab || symtab->sh_link >= ehdr->e_shnum) return;
  const Elf64_Shdr& strtab = sections[symtab->sh_link];
  if (symtab->sh_offset + symtab->sh_size > file.size() || strtab.sh_offset + strtab.sh_size > file.size()) return;
  const auto* syms = reinterpret_cast<const Elf64_Sym*>(file.data() + symtab->sh_offset);
  const std::size_t count = symtab->sh_size / sizeof(Elf64_Sym);
  const char* names = reinterpret_cast<const char*>(file.data() + strtab.sh_offset);
  auto name_of = [&](const Elf64_Sym& s) -> const char* { return s.st_name < strtab.sh_size ? names + s.st_name : ""; };

  const auto address = reinterpret_cast<std::uintptr_t>(kernel);
  const std::uintptr_t wanted = ehdr->e_type == ET_DYN ? address - reinterpret_cast<std::uintptr_t>(dl.dli_fbase) : address;
  std::string symbol;
  for (std::size_t i = 0; i < count && symbol.empty(); ++i)
    if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_value == wanted) symbol = name_of(syms[i]);
  if (symbol.empty()) return;
  info.name = demangle(symbol);
  const std::string prefix = local_static_prefix(symbol);
  std::size_t shared = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char* name = name_of(syms[i]);
    if (ELF64_ST_TYPE(syms[i].st_info) == STT_TLS && syms[i].st_shndx != SHN_UNDEF) {
      if (std::strncmp(name, prefix.c_str(), prefix.size()) == 0) shared += syms[i].st_size;
      if (syms[i].st_size > 0) info.module_shared.push_back({short_local_name(demangle(name)), syms[i].st_value, syms[i].st_size});
    }
    // Code compiled with -fsanitize=thread calls __tsan_func_entry, which liblockstep answers.
    if (syms[i].st_shndx == SHN_UNDEF && std::strcmp(name, "__tsan_func_entry") == 0) info.instrumented = true;
  }
  info.static_shared_bytes = shared;
  std::sort(info.module_shared.begin(), info.module_shared.end(),
            [](const thread_local_symbol& a, const thread_local_symbol& b) { return a.offset < b.offset; });
  // A symbol can appear twice (local and unique copies of one template's array).
  info.module_shared.erase(std::unique(info.module_shared.begin(), info.module_shared.end(),
                                       [](const thread_local_symbol& a, const thread_local_symbol& b) { return a.offset == b.offset; }),
                           info.module_shared.end());
}

}  // namespace

// Keyed by the module's file too: a module unloaded and another loaded in its
// place may hold a different kernel at the same address (the JIT's modules,
// dropped and compiled again), whose name, __shared__ arrays and engine
// record are its own. Entries stay for the process (cudaFuncGetName's names).
kernel_info& kernel_info_for(const void* kernel) {
  Dl_info dl{};
  std::string module = dladdr(kernel, &dl) && dl.dli_fname ? dl.dli_fname : "";
  static std::mutex mutex;
  static std::map<std::pair<const void*, std::string>, kernel_info> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace({kernel, std::move(module)});
  if (inserted) read_elf_symbols(kernel, it->second);
  return it->second;
}

}  // namespace lockstep::emu
