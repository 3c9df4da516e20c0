// The ownership and permission checks of the folders lockstep loads code
// from. Anyone who can write such a folder or a file in it can make the next
// process that loads from it run their code: entry names are predictable
// hashes, and a checksum beside an entry is as writable as the entry.
#include "jit/private_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>

namespace lockstep::jit {
namespace {

namespace fs = std::filesystem;

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Each missing folder of `path` created owner-only; existing ones are left
// as they are (the checks then judge the last one).
void create_private_directories(const fs::path& path) {
  fs::path prefix;
  for (const fs::path& part : path) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::system_error(errno, std::generic_category(), "cannot create " + prefix.string());
  }
}

// The folder at `path` (created if missing), open; its symbolic link, if it
// is one, followed once here and never again, as everything after goes
// through the descriptor.
int open_directory(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    create_private_directories(path);
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path.string());
  return fd;
}

// The open folder `fd` at `path` when it passes; otherwise nullopt with the
// reason in `problem`. Closes `fd` when it fails.
std::shared_ptr<const checked_directory> check_directory(int fd, const fs::path& path, std::string& problem) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    problem = std::string("cannot read its status: ") + std::strerror(errno);
  } else if (auto why = untrusted_because(status)) {
    problem = *why;
  } else {
    return std::make_shared<const checked_directory>(fd, path);
  }
  ::close(fd);
  std::error_code ignored;
  if (fs::is_symlink(path, ignored)) problem = "it is a symbolic link to " + fs::read_symlink(path, ignored).string() + ", and " + problem;
  return nullptr;
}

// Removes the folder made by mkdtemp when this process (not a forked child) ends.
struct temporary_folder_remover {
  fs::path path;
  pid_t owner = ::getpid();
  ~temporary_folder_remover() {
    std::error_code ignored;
    if (!path.empty() && ::getpid() == owner) fs::remove_all(path, ignored);
  }
};

// This process's own cache folder, for when the configured one fails.
std::shared_ptr<const checked_directory> fallback_directory() {
  static std::mutex mutex;
  static std::shared_ptr<const checked_directory> fallback;
  static temporary_folder_remover remover;
  std::lock_guard lock(mutex);
  if (fallback) return fallback;
  std::string problem;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && fs::path(runtime).is_absolute()) {
    try {
      const fs::path path = fs::path(runtime) / "lockstep";
      if ((fallback = check_directory(open_directory(path), path, problem))) return fallback;
    } catch (const std::system_error&) {  // then the temporary directory
    }
  }
  std::error_code error;
  std::string pattern = (fs::temp_directory_path(error) / "lockstep-cache-XXXXXX").string();
  if (error) pattern = "/tmp/lockstep-cache-XXXXXX";
  if (!::mkdtemp(pattern.data()))  // owner-only, and new: no one else's files in it
    throw std::system_error(errno, std::generic_category(), "cannot create a private kernel cache folder " + pattern);
  remover.path = pattern;
  fallback = check_directory(open_directory(pattern), pattern, problem);
  if (!fallback) throw std::runtime_error("the private kernel cache folder " + pattern + " that lockstep just made fails its checks: " + problem);
  return fallback;
}

// Says once per folder and reason that `path` is not used, and what is.
void warn_once(const fs::path& path, const std::string& problem, const fs::path& instead) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (!warned.insert(path.string() + '\n' + problem).second) return;
  std::fprintf(stderr,
               "lockstep: warning: not using the kernel cache folder %s: %s, so another user could put code there that lockstep would "
               "load. Make it yours and private (chmod 700 %s, as its owner), or set LOCKSTEP_CACHE_DIR to a folder of your own. Using "
               "%s for this process instead.\n",
               path.c_str(), problem.c_str(), path.c_str(), instead.c_str());
}

// The contents of the regular file `name` in `directory`, opened without
// following a symbolic link and, when `trusted_only`, only if it passes the
// checks; nullopt when it is missing or fails, with the reason in `problem`.
std::optional<std::string> read_file_in(const checked_directory& directory, const std::string& name, bool trusted_only, std::string& problem) {
  // O_NONBLOCK: a FIFO put there must not hang the open.
  const int fd = ::openat(directory.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat status {};
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    problem = errno == ELOOP ? "it is a symbolic link" : std::string("cannot open it: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (::fstat(fd, &status) != 0)
    problem = std::string("cannot read its status: ") + std::strerror(errno);
  else if (!S_ISREG(status.st_mode))
    problem = "it is not a regular file";
  else if (auto why = trusted_only ? untrusted_because(status) : std::nullopt)
    problem = *why;
  std::string contents;
  if (problem.empty()) {
    contents.resize(static_cast<std::size_t>(status.st_size));
    std::size_t done = 0;
    while (done < contents.size()) {
      const ssize_t got = ::pread(fd, contents.data() + done, contents.size() - done, static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    contents.resize(done);  // a short read shows as a size mismatch to the caller
  }
  ::close(fd);
  if (!problem.empty()) return std::nullopt;
  return contents;
}

}  // namespace

checked_directory::~checked_directory() { ::close(fd_); }

std::string checked_directory::path_through_descriptor(const std::string& name) const { return "/proc/self/fd/" + std::to_string(fd_) + "/" + name; }

std::optional<std::string> untrusted_because(const struct stat& status) {
  if (status.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(status.st_uid) + ", not by you (uid " + std::to_string(::geteuid()) + ")";
  if (status.st_mode & S_IWOTH) return "it is writable by others (mode " + octal_mode(status.st_mode) + ")";
  if (status.st_mode & S_IWGRP) return "it is writable by its group (mode " + octal_mode(status.st_mode) + ")";
  return std::nullopt;
}

std::shared_ptr<const checked_directory> open_private_directory(const fs::path& configured) {
  int fd = -1;
  try {
    fd = open_directory(configured);
  } catch (const std::system_error& error) {
    throw std::runtime_error("cannot create lockstep's kernel cache directory " + configured.string() + ": " + error.what() +
                             "; set LOCKSTEP_CACHE_DIR to a writable directory");
  }
  std::string problem;
  if (auto checked = check_directory(fd, configured, problem)) return checked;
  auto fallback = fallback_directory();
  warn_once(configured, problem, fallback->path());
  return fallback;
}

std::optional<std::string> read_trusted_file(const checked_directory& directory, const std::string& name) {
  std::string problem;
  auto contents = read_file_in(directory, name, true, problem);
  if (!problem.empty())
    std::fprintf(stderr,
                 "lockstep: warning: not loading the kernel cache file %s: %s; only files you own that no one else can write are loaded. "
                 "It will be rebuilt.\n",
                 (directory.path() / name).c_str(), problem.c_str());
  return contents;
}

std::optional<std::string> read_built_file(const checked_directory& directory, const std::string& name) {
  std::string problem;
  return read_file_in(directory, name, false, problem);
}

void write_private_file(const checked_directory& directory, const std::string& name, const std::string& contents) {
  const fs::path shown = directory.path() / name;
  const int fd = ::openat(directory.fd(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create the kernel cache file " + shown.string());
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t wrote = ::write(fd, contents.data() + done, contents.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      const int error = wrote < 0 ? errno : ENOSPC;
      ::close(fd);
      throw std::system_error(error, std::generic_category(), "cannot write the kernel cache file " + shown.string() + " (is the disk full?)");
    }
    done += static_cast<std::size_t>(wrote);
  }
  ::close(fd);
}

}  // namespace lockstep::jit
