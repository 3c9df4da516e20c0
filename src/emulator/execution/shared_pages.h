// Device memory shared between processes (CUDA IPC and exportable memory
// pools on the emulator). Device memory is host memory here, so sharing it
// means backing its pages by a memory file (memfd) that the other process
// maps too. Another process names the file by the exporter's pid and
// descriptor and opens it through /proc/<pid>/fd/<fd>, which works for
// processes of the same user while the exporter lives and holds the file, as
// a CUDA IPC handle works only while its exporter holds the memory.
#pragma once
#include <cstddef>

namespace lockstep::emu {

inline constexpr std::size_t shared_page_bytes = 4096;
// `bytes` rounded up to whole pages (a page for 0).
inline std::size_t whole_pages(std::size_t bytes) { return ((bytes ? bytes : 1) + shared_page_bytes - 1) / shared_page_bytes * shared_page_bytes; }

// A new memory file of `bytes` (a multiple of the page), zero-filled; its descriptor, or -1.
int new_memory_file(const char* name, std::size_t bytes);
// Backs the whole pages holding [begin, begin + bytes) by a new memory file at
// the same addresses, contents kept. Returns the file's descriptor (-1 if it
// cannot) and where `begin` lies in the file.
int share_pages(void* begin, std::size_t bytes, std::size_t& offset_in_file);
// Makes the pages that share_pages shared private again, contents kept, and closes `fd`.
void unshare_pages(void* begin, std::size_t bytes, int fd);
// A descriptor of process `pid`'s open file `fd`, or -1 (the process is gone, or is another user's).
int open_other_process_file(int pid, int fd);
// [offset, offset + bytes) of file `fd` mapped shared and writable; `offset` a multiple of the page. Null if it cannot.
void* map_file(int fd, std::size_t offset, std::size_t bytes);
void unmap_file(void* begin, std::size_t bytes);

}  // namespace lockstep::emu
