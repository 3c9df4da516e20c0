// Folders that lockstep loads code from, and the files in them: owned by
// this user and writable by no one else, reached without following symbolic
// links below the folder, and pinned by an open descriptor so that what was
// checked is what gets loaded.
#pragma once
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace lockstep::jit {

// An open folder that passed the checks. Its path is for messages and for
// programs (compilers) that write into it; lockstep itself reads through fd().
class checked_directory {
 public:
  checked_directory(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  checked_directory(const checked_directory&) = delete;
  checked_directory& operator=(const checked_directory&) = delete;
  ~checked_directory();
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  // "/proc/self/fd/<fd>/<name>": `name` in this very folder, whatever its
  // path leads to by now; valid while this object lives.
  std::string path_through_descriptor(const std::string& name) const;

 private:
  int fd_;
  std::filesystem::path path_;
};

// Why code must not be loaded from a file or folder of status `status`:
// "it is owned by uid 65534, not by you (uid 1000)", "it is writable by
// others (mode 0777)"; nullopt when it may.
std::optional<std::string> untrusted_because(const struct stat& status);

// `configured`, its missing folders created 0700, when it passes the checks;
// otherwise, after a warning on stderr (once per folder) that says why and
// how to fix it, a private folder of lockstep's own for this process
// ($XDG_RUNTIME_DIR/lockstep, or a new one in the temporary directory).
// Throws std::runtime_error when `configured` cannot be created or opened.
std::shared_ptr<const checked_directory> open_private_directory(const std::filesystem::path& configured);

// The contents of the regular file `name` in `directory`, opened without
// following a symbolic link, when it passes the checks; nullopt when it is
// missing. One that fails is not read: a warning on stderr names it and says
// why, and nullopt is returned, so the caller rebuilds it.
std::optional<std::string> read_trusted_file(const checked_directory& directory, const std::string& name);

// The contents of the regular file `name` in `directory` (not a symbolic
// link), whatever its owner and mode: for what a compiler just wrote there.
std::optional<std::string> read_built_file(const checked_directory& directory, const std::string& name);

// Creates `name` in `directory`, owner-only (0600), failing if anything is
// there already (a symbolic link included), and writes `contents` to it.
// Throws std::system_error when it cannot.
void write_private_file(const checked_directory& directory, const std::string& name, const std::string& contents);

}  // namespace lockstep::jit
