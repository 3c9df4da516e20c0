// Running a program and collecting what it prints: the host compiler for the
// JIT and the tools, addr2line for check mode's source lines.
#include "toolchain/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace lockstep::toolchain {
namespace {

std::system_error errno_error(const std::string& what) { return {errno, std::generic_category(), what}; }

class file_descriptor {
 public:
  explicit file_descriptor(int fd = -1) : fd_(fd) {}
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() { close(); }
  int get() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

class spawn_file_actions {
 public:
  spawn_file_actions() { posix_spawn_file_actions_init(&actions_); }
  spawn_file_actions(const spawn_file_actions&) = delete;
  spawn_file_actions& operator=(const spawn_file_actions&) = delete;
  ~spawn_file_actions() { posix_spawn_file_actions_destroy(&actions_); }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

process_result run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program to run");
  // Close-on-exec, so that processes spawned by other threads do not hold
  // the write end open (which would delay the end of the output).
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0) throw errno_error("cannot create a pipe to run " + argv[0]);
  file_descriptor output_end(pipe_ends[0]), input_end(pipe_ends[1]);

  spawn_file_actions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), input_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(actions.get(), input_end.get(), STDERR_FILENO);
  std::vector<char*> arguments;
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  pid_t child;
  const int error = ::posix_spawnp(&child, argv[0].c_str(), actions.get(), nullptr, arguments.data(), environ);
  input_end.close();
  if (error != 0) throw std::system_error(error, std::generic_category(), "cannot run " + argv[0]);

  process_result result{0, {}};
  char buffer[4096];
  for (;;) {
    const ssize_t count = ::read(output_end.get(), buffer, sizeof buffer);
    if (count > 0) {
      result.output.append(buffer, static_cast<std::size_t>(count));
    } else if (count == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw errno_error("cannot wait for " + argv[0]);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace lockstep::toolchain
