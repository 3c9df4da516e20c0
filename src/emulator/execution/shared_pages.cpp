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

// The whole pages holding [begin, begin + bytes): their first address and their size.
struct page_span {
  char* first;
  std::size_t bytes;
  page_span(const void* begin, std::size_t size) {
    const auto a = reinterpret_cast<std::uintptr_t>(begin);
    const std::uintptr_t floor = a / shared_page_bytes * shared_page_bytes;
    first = reinterpret_cast<char*>(floor);
    bytes = whole_pages(a - floor + size);
  }
};

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
  const page_span pages(begin, bytes);
  const int fd = new_memory_file("lockstep-ipc", pages.bytes);
  if (fd < 0) return -1;
  // The file takes the pages' contents, then takes their place: MAP_FIXED
  // replaces the private pages at once, so the addresses never go unmapped.
  if (!write_all(fd, pages.first, pages.bytes) ||
      mmap(pages.first, pages.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    close(fd);
    return -1;
  }
  offset_in_file = static_cast<char*>(begin) - pages.first;
  return fd;
}

void unshare_pages(void* begin, std::size_t bytes, int fd) {
  const page_span pages(begin, bytes);
  // The heap gets its pages back private, as they were, before they are freed.
  std::vector<char> kept(pages.first, pages.first + pages.bytes);
  if (mmap(pages.first, pages.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
    std::memcpy(pages.first, kept.data(), pages.bytes);
  close(fd);
}

int open_other_process_file(int pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  return open(path.c_str(), O_RDWR | O_CLOEXEC);
}

void* map_file(int fd, std::size_t offset, std::size_t bytes) {
  void* p = mmap(nullptr, whole_pages(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_file(void* begin, std::size_t bytes) {
  const page_span pages(begin, bytes);
  munmap(pages.first, pages.bytes);
}

}  // namespace lockstep::emu
