#include "kernel_info.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace lockstep::emu {
namespace {

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

// The prefix of the symbols of local statics inside function `symbol`.
std::string local_static_prefix(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) == 0) return "_ZZ" + symbol.substr(2) + "E";
  return "_ZZ" + std::to_string(symbol.size()) + symbol + "E";  // extern "C" kernel
}

class mapped_file {
 public:
  explicit mapped_file(const char* path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st{};
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
  mapped_file file(dl.dli_fname && *dl.dli_fname ? dl.dli_fname : "/proc/self/exe");
  if (!file.data() || file.size() < sizeof(Elf64_Ehdr)) return;
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  if (std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64) return;
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
  for (std::size_t i = 0; i < count; ++i)
    if (ELF64_ST_TYPE(syms[i].st_info) == STT_TLS && std::strncmp(name_of(syms[i]), prefix.c_str(), prefix.size()) == 0)
      shared += syms[i].st_size;
  info.static_shared_bytes = shared;
}

}  // namespace

kernel_info& kernel_info_for(const void* kernel) {
  static std::mutex mutex;
  static std::unordered_map<const void*, kernel_info> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(kernel);
  if (inserted) {
    it->second.name = "?";
    read_elf_symbols(kernel, it->second);
  }
  return it->second;
}

}  // namespace lockstep::emu
