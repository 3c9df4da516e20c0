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
#include "jit/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>

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

std::optional<std::string> read_whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string contents{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return std::nullopt;
  return contents;
}

// Removes a temporary file unless it was renamed into place.
class temporary_file {
 public:
  explicit temporary_file(fs::path path) : path_(std::move(path)) {}
  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;
  ~temporary_file() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  void rename_to(const fs::path& final_path) {
    fs::rename(path_, final_path);
    path_.clear();
  }

 private:
  fs::path path_;
};

// Held from construction to destruction; threads of one process exclude each
// other too, as each opens the file anew.
class exclusive_file_lock {
 public:
  explicit exclusive_file_lock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
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

// The artifact of the entry at `metadata_path` if that entry is for `key` and intact.
std::optional<fs::path> valid_artifact(const fs::path& directory, const fs::path& metadata_path, const std::string& key) {
  const auto metadata_text = read_whole_file(metadata_path);
  if (!metadata_text) return std::nullopt;
  const auto entry = parse_metadata(*metadata_text);
  if (!entry || entry->key != key) return std::nullopt;
  const fs::path artifact = directory / entry->artifact_name;
  const auto contents = read_whole_file(artifact);
  if (!contents || contents->size() != entry->size || hash_hex(*contents) != entry->checksum) return std::nullopt;
  return artifact;
}

// Removes the files of the entry named `hash` but its lock: its metadata,
// artifacts, and temporaries of builds that crashed. Only the lock's holder
// writes them, so none of them is in use by a build. An artifact a process
// has loaded stays loaded; its new one gets another name.
void remove_entry_files(const fs::path& directory, const std::string& hash) {
  const std::string lock_name = hash + ".lock";
  std::error_code ignored;
  for (const auto& file : fs::directory_iterator(directory, ignored)) {
    const std::string name = file.path().filename().string();
    if (name.starts_with(hash) && name != lock_name) fs::remove(file.path(), ignored);
  }
}

}  // namespace

fs::path cache_directory() {
  fs::path directory;
  if (const std::string configured = environment("LOCKSTEP_CACHE_DIR"); !configured.empty())
    directory = configured;
  else if (const fs::path xdg = environment("XDG_CACHE_HOME"); xdg.is_absolute())  // the XDG spec ignores relative ones
    directory = xdg / "lockstep";
  else if (const std::string home = environment("HOME"); !home.empty())
    directory = fs::path(home) / ".cache" / "lockstep";
  else
    throw std::runtime_error("no directory for lockstep's kernel cache: set LOCKSTEP_CACHE_DIR (or HOME)");

  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory))
    throw std::runtime_error("cannot create lockstep's kernel cache directory " + directory.string() +
                             (error ? ": " + error.message() : ": not a directory") + "; set LOCKSTEP_CACHE_DIR to a writable directory");
  return directory;
}

cached_artifact cache_lookup_or_build(const std::string& key, const std::string& extension, const std::function<void(const fs::path&)>& build) {
  const fs::path directory = cache_directory();
  const std::string hash = hash_hex(key);
  const fs::path metadata_path = directory / (hash + ".meta");

  if (auto artifact = valid_artifact(directory, metadata_path, key)) return {*artifact, true};
  const exclusive_file_lock lock(directory / (hash + ".lock"));
  // Another thread or process may have built it while this one waited.
  if (auto artifact = valid_artifact(directory, metadata_path, key)) return {*artifact, true};
  remove_entry_files(directory, hash);

  temporary_file built(directory / (hash + ".tmp-" + random_hex() + extension));
  build(built.path());
  const auto contents = read_whole_file(built.path());
  if (!contents) throw std::runtime_error("building the kernel cache entry " + hash + " did not write " + built.path().string());
  const entry_metadata entry{hash + "-" + random_hex() + extension, contents->size(), hash_hex(*contents), key};
  const fs::path artifact = directory / entry.artifact_name;
  built.rename_to(artifact);

  temporary_file metadata(directory / (hash + ".tmp-" + random_hex() + ".meta"));
  {
    std::ofstream out(metadata.path(), std::ios::binary);
    out << to_text(entry);
    out.close();
    if (!out) throw std::runtime_error("cannot write the kernel cache file " + metadata.path().string() + ": is the disk full?");
  }
  metadata.rename_to(metadata_path);
  return {artifact, false};
}

}  // namespace lockstep::jit
