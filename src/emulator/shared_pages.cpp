#include "shared_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lockstep::emu {
namespace {

std::uintptr_t page_floor(std::uintptr_t a) { return a / shared_page_bytes * shared_page_bytes; }
std::uintptr_t page_ceil(std::uintptr_t a) { return (a + shared_page_bytes - 1) / shared_page_bytes * shared_page_bytes; }

// Writes all of [data, data + bytes) to fd from its start.
bool write_all(int fd, const void* data, std::size_t bytes) {
  const char* at = static_cast<const char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = pwrite(fd, at + done, bytes - done, static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int new_memory_file(const char* name, std::size_t bytes) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int share_pages(void* begin, std::size_t bytes, std::size_t& offset_in_file) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = page_floor(a), span = page_ceil(a + (bytes ? bytes : 1)) - first;
  auto* pages = reinterpret_cast<void*>(first);
  const int fd = new_memory_file("lockstep-ipc", span);
  if (fd < 0) return -1;
  // The file takes the pages' contents, then takes their place: MAP_FIXED
  // replaces the private pages at once, so the addresses never go unmapped.
  if (!write_all(fd, pages, span) || mmap(pages, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    close(fd);
    return -1;
  }
  offset_in_file = a - first;
  return fd;
}

void unshare_pages(void* begin, std::size_t bytes, int fd) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = page_floor(a), span = page_ceil(a + (bytes ? bytes : 1)) - first;
  auto* pages = reinterpret_cast<void*>(first);
  // The heap gets its pages back private, as they were, before they are freed.
  std::vector<char> kept(static_cast<const char*>(pages), static_cast<const char*>(pages) + span);
  if (mmap(pages, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) std::memcpy(pages, kept.data(), span);
  close(fd);
}

int open_other_process_file(int pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  return open(path.c_str(), O_RDWR | O_CLOEXEC);
}

void* map_file(int fd, std::size_t offset, std::size_t bytes) {
  void* p = mmap(nullptr, page_ceil(bytes ? bytes : 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_file(void* begin, std::size_t bytes) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(begin);
  munmap(reinterpret_cast<void*>(page_floor(a)), page_ceil(a + (bytes ? bytes : 1)) - page_floor(a));
}

}  // namespace lockstep::emu
