// The kernel cache: for each key, in the cache directory,
//   <hash>.lock            flock'd by whoever builds the entry (kept, empty)
//   <hash>.meta            the full key, the artifact's name, size and checksum
//   <hash>-<random><ext>   the artifact; a rebuild gets a new random name
// where <hash> is hash_hex(key). Files are published whole by rename(), the
// artifact before its metadata, so readers need no lock: an entry whose
// metadata is missing, for another key (a hash collision), unreadable, or
// whose artifact does not match its size and checksum is rebuilt under the
// lock. That check also covers a crash that leaves renamed but unwritten
// files, which is why nothing is fsync'd.
// Every file is reached through the cache folder's checked descriptor
// (src/jit/private_directory), written owner-only and exclusively, and read
// only when it is this user's alone.
#include "jit/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "toolchain/hash.h"

namespace lockstep::jit {
namespace {

namespace fs = std::filesystem;
using toolchain::hash_hex;
using toolchain::hex64;

// Unpredictable across processes, unlike a counter, so that two machines
// sharing a cache directory never pick the same new name.
std::string random_hex() {
  std::random_device device;
  return hex64((std::uint64_t{device()} << 32) ^ device());
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// Removes a temporary file of the cache folder unless it was renamed into place.
class temporary_file {
 public:
  temporary_file(const checked_directory& directory, std::string name) : directory_(directory), name_(std::move(name)) {}
  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;
  ~temporary_file() {
    if (!name_.empty()) ::unlinkat(directory_.fd(), name_.c_str(), 0);
  }
  const std::string& name() const { return name_; }
  fs::path path() const { return directory_.path() / name_; }
  void rename_to(const std::string& final_name) {
    if (::renameat(directory_.fd(), name_.c_str(), directory_.fd(), final_name.c_str()) != 0)
      throw std::system_error(errno, std::generic_category(), "cannot rename the kernel cache file " + path().string() + " to " + final_name);
    name_.clear();
  }

 private:
  const checked_directory& directory_;
  std::string name_;
};

// Held from construction to destruction; threads of one process exclude each
// other too, as each opens the file anew.
class exclusive_file_lock {
 public:
  exclusive_file_lock(const checked_directory& directory, const std::string& name)
      : fd_(::openat(directory.fd(), name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) {
    const fs::path path = directory.path() / name;
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot open the kernel cache's lock file " + path.string());
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      throw std::system_error(error, std::generic_category(), "cannot lock the kernel cache's lock file " + path.string());
    }
  }
  exclusive_file_lock(const exclusive_file_lock&) = delete;
  exclusive_file_lock& operator=(const exclusive_file_lock&) = delete;
  ~exclusive_file_lock() { ::close(fd_); }  // releases the lock

 private:
  int fd_;
};

constexpr std::string_view metadata_header = "lockstep cache entry 1\n";

struct entry_metadata {
  std::string artifact_name;  // a file name in the cache directory
  std::uintmax_t size = 0;
  std::string checksum;  // hash_hex of the artifact's contents
  std::string key;
};

// The key goes last, after its length, as it may hold any bytes.
std::string to_text(const entry_metadata& entry) {
  return std::string(metadata_header) + "artifact " + entry.artifact_name + "\nsize " + std::to_string(entry.size) + "\nchecksum " + entry.checksum +
         "\nkey " + std::to_string(entry.key.size()) + "\n" + entry.key;
}

// The value of the line "<name> <value>\n" at the start of `text`, which
// then moves past it.
std::optional<std::string> take_field(std::string_view& text, std::string_view name) {
  if (!text.starts_with(name) || text.substr(name.size(), 1) != " ") return std::nullopt;
  const std::size_t end = text.find('\n');
  if (end == std::string_view::npos) return std::nullopt;
  std::string value(text.substr(name.size() + 1, end - name.size() - 1));
  text.remove_prefix(end + 1);
  return value;
}

std::optional<std::uintmax_t> parse_count(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 19 || text->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(*text);
}

std::optional<entry_metadata> parse_metadata(std::string_view text) {
  if (!text.starts_with(metadata_header)) return std::nullopt;
  text.remove_prefix(metadata_header.size());
  entry_metadata entry;
  const auto artifact_name = take_field(text, "artifact");
  const auto size = parse_count(take_field(text, "size"));
  const auto checksum = take_field(text, "checksum");
  const auto key_size = parse_count(take_field(text, "key"));
  // Garbage could name a file outside the cache directory.
  if (!artifact_name || artifact_name->empty() || artifact_name->find('/') != std::string::npos || *artifact_name == "." || *artifact_name == ".." ||
      !size || !checksum || !key_size || *key_size != text.size())
    return std::nullopt;
  return entry_metadata{*artifact_name, *size, *checksum, std::string(text)};
}

// The artifact of the entry `hash` if that entry is for `key`, intact and trusted.
std::optional<cached_artifact> valid_artifact(const std::shared_ptr<const checked_directory>& directory, const std::string& hash,
                                              const std::string& key) {
  const auto metadata_text = read_trusted_file(*directory, hash + ".meta");
  if (!metadata_text) return std::nullopt;
  const auto entry = parse_metadata(*metadata_text);
  if (!entry || entry->key != key) return std::nullopt;
  auto contents = read_trusted_file(*directory, entry->artifact_name);
  if (!contents || contents->size() != entry->size || hash_hex(*contents) != entry->checksum) return std::nullopt;
  return cached_artifact{directory->path() / entry->artifact_name, directory->path_through_descriptor(entry->artifact_name), std::move(*contents),
                         directory, true};
}

// Removes the files of the entry named `hash` but its lock: its metadata,
// artifacts, and temporaries of builds that crashed. Only the lock's holder
// writes them, so none of them is in use by a build. An artifact a process
// has loaded stays loaded; its new one gets another name.
void remove_entry_files(const checked_directory& directory, const std::string& hash) {
  const std::string lock_name = hash + ".lock";
  // A descriptor of its own (closedir closes it): a dup would share the
  // folder's read position with the other threads listing it.
  const int listing_fd = ::openat(directory.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* listing = listing_fd < 0 ? nullptr : ::fdopendir(listing_fd);
  if (!listing) {
    if (listing_fd >= 0) ::close(listing_fd);
    return;  // what cannot be removed is overwritten by the rename that publishes the new entry, or left as litter
  }
  std::vector<std::string> names;
  while (const dirent* file = ::readdir(listing)) {
    const std::string name = file->d_name;
    if (name.starts_with(hash) && name != lock_name) names.push_back(name);
  }
  ::closedir(listing);
  for (const std::string& name : names) ::unlinkat(directory.fd(), name.c_str(), 0);
}

// $LOCKSTEP_CACHE_DIR, $XDG_CACHE_HOME/lockstep or $HOME/.cache/lockstep.
fs::path configured_cache_directory() {
  if (const std::string configured = environment("LOCKSTEP_CACHE_DIR"); !configured.empty()) return configured;
  if (const fs::path xdg = environment("XDG_CACHE_HOME"); xdg.is_absolute()) return xdg / "lockstep";  // the XDG spec ignores relative ones
  if (const std::string home = environment("HOME"); !home.empty()) return fs::path(home) / ".cache" / "lockstep";
  throw std::runtime_error("no directory for lockstep's kernel cache: set LOCKSTEP_CACHE_DIR (or HOME)");
}

}  // namespace

fs::path cache_directory() { return open_private_directory(configured_cache_directory())->path(); }

cached_artifact cache_lookup_or_build(const std::string& key, const std::string& extension, const std::function<void(const fs::path&)>& build) {
  const auto directory = open_private_directory(configured_cache_directory());
  const std::string hash = hash_hex(key);

  if (auto artifact = valid_artifact(directory, hash, key)) return std::move(*artifact);
  const exclusive_file_lock lock(*directory, hash + ".lock");
  // Another thread or process may have built it while this one waited.
  if (auto artifact = valid_artifact(directory, hash, key)) return std::move(*artifact);
  remove_entry_files(*directory, hash);

  // The build's output, made by a compiler with its own permissions, is
  // copied into an owner-only file of this process's making.
  const temporary_file built(*directory, hash + ".tmp-" + random_hex() + extension);
  build(built.path());
  auto contents = read_built_file(*directory, built.name());
  if (!contents) throw std::runtime_error("building the kernel cache entry " + hash + " did not write " + built.path().string());
  const entry_metadata entry{hash + "-" + random_hex() + extension, contents->size(), hash_hex(*contents), key};
  temporary_file artifact(*directory, hash + ".tmp-" + random_hex() + extension);
  write_private_file(*directory, artifact.name(), *contents);
  artifact.rename_to(entry.artifact_name);

  temporary_file metadata(*directory, hash + ".tmp-" + random_hex() + ".meta");
  write_private_file(*directory, metadata.name(), to_text(entry));
  metadata.rename_to(hash + ".meta");
  return {directory->path() / entry.artifact_name, directory->path_through_descriptor(entry.artifact_name), std::move(*contents), directory, false};
}

}  // namespace lockstep::jit
