#include "sim/study/executor.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace sim::study {

int default_jobs(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void print_child_progress(size_t index, int code, void* ctx) {
  auto* p = static_cast<ChildProgress*>(ctx);
  ++p->done;
  std::fprintf(stderr, "[%zu/%zu] %s %s\n", p->done, p->names.size(), p->names[index].c_str(),
               code == 0 ? "done" : ("FAILED (exit " + std::to_string(code) + ")").c_str());
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  return in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "dpsim" : p.string();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_line(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& a : args) {
    const bool plain =
        !a.empty() &&
        a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%") ==
            std::string::npos;
    line += (line.empty() ? "" : " ") + (plain ? a : shell_quote(a));
  }
  return line;
}

namespace {

pid_t start(const ChildJob& job) {
  std::vector<char*> argv;
  for (const auto& a : job.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!job.log.empty()) {
      const int fd = open(job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

}  // namespace

std::vector<int> run_children(const std::vector<ChildJob>& list, int jobs,
                              void (*on_done)(size_t index, int code, void* ctx), void* ctx) {
  std::vector<int> codes(list.size(), 127);
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < list.size() || !running.empty()) {
    while (next < list.size() && static_cast<int>(running.size()) < std::max(jobs, 1)) {
      const pid_t pid = start(list[next]);
      if (pid > 0) {
        running[pid] = next;
      } else if (on_done) {
        on_done(next, 127, ctx);
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    codes[it->second] = code_of(status);
    if (on_done) on_done(it->second, codes[it->second], ctx);
    running.erase(it);
  }
  return codes;
}

}  // namespace sim::study
