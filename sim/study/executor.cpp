#include "sim/study/executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "sim/config/json_util.h"
#include "sim/core/paths.h"

namespace sim::study {

namespace fs = std::filesystem;

int default_jobs(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  return in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
}

bool result_file_complete(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("summary") || !j.contains("resources")) return false;
  const auto& s = j["summary"];
  const std::string by = s.is_object() && s.contains("stopped_by") && s["stopped_by"].is_string()
                             ? s["stopped_by"].get<std::string>()
                             : "";
  return by != "SIGINT" && by != "SIGTERM";
}

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
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

// Identifies a dpsim build: a rebuilt executable reruns every recorded job (its results may differ).
std::string build_stamp(const std::string& exe) {
  std::error_code ec;
  const auto size = fs::file_size(exe, ec);
  const auto mtime = fs::last_write_time(exe, ec).time_since_epoch().count();
  return fmt::format("{} {} {}", exe, size, mtime);
}

// The record's lines after the exit code.
std::string record_tail(const ChildJob& job) {
  return build_stamp(job.args.at(0)) + "\n" + shell_line(job.args) + "\n";
}

struct Signals {
  struct sigaction int_, quit_;
};

pid_t start(const ChildJob& job, const Signals* restore) {
  std::vector<char*> argv;
  for (const auto& a : job.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (restore != nullptr) {
      sigaction(SIGINT, &restore->int_, nullptr);
      sigaction(SIGQUIT, &restore->quit_, nullptr);
    }
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

ChildEnd end_of(int status, const struct rusage& ru) {
  ChildEnd e;
  e.status = status;
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 127;
  e.cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  e.max_rss_bytes = ru.ru_maxrss * 1024.0;
  return e;
}

}  // namespace

Executor::Executor(int jobs, Console console) : jobs_(default_jobs(jobs)), console_(std::move(console)) {}

bool Executor::done_before(const ChildJob& job, int* code) const {
  if (job.result.empty()) return false;
  int recorded = 0;
  if (!job.record.empty()) {
    const auto text = config::read_text_file(job.record, "a run record");
    const std::string record = text ? *text : "";
    const size_t nl = record.find('\n');
    if (nl == std::string::npos || record.substr(nl + 1) != record_tail(job)) return false;
    recorded = std::atoi(record.substr(0, nl).c_str());
  }
  if (!result_file_complete(job.result)) return false;
  if (code != nullptr) *code = recorded;
  return true;
}

Status Executor::emit(const std::string& file, const std::vector<ChildJob>& jobs) const {
  std::string lines;
  for (const auto& j : jobs) lines += shell_line(j.args) + "\n";
  const std::string err = write_file_atomically(file, lines);
  return err.empty() ? Status() : Status::error(err);
}

std::string Executor::failure(const ChildJob& job, int code) {
  return fmt::format("point {} failed (exit {}); its log: {}", job.name, code, job.log);
}

std::vector<ChildEnd> Executor::run(const std::vector<ChildJob>& list) const {
  size_t done = 0;
  return run(list, [&](size_t i, const ChildEnd& e) {
    ++done;
    console_.err(fmt::format("[{}/{}] {} {}\n", done, list.size(), list[i].name,
                             e.code == 0 ? "done" : fmt::format("FAILED (exit {})", e.code)));
  });
}

std::vector<ChildEnd> Executor::run(const std::vector<ChildJob>& list, const OnEnd& on_end) const {
  Signals saved;
  if (shield_) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &saved.int_);
    sigaction(SIGQUIT, &ignore, &saved.quit_);
  }
  auto finish = [&](size_t i, const ChildEnd& e) {
    const ChildJob& job = list[i];
    if (!job.record.empty())
      write_file_atomically(job.record, fmt::format("{}\n{}", e.code, record_tail(job)));
    if (on_end) on_end(i, e);
  };
  std::vector<ChildEnd> ends(list.size());
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < list.size() || !running.empty()) {
    while (next < list.size() && static_cast<int>(running.size()) < jobs_) {
      std::error_code ec;
      if (!list[next].record.empty()) fs::remove(list[next].record, ec);
      const pid_t pid = start(list[next], shield_ ? &saved : nullptr);
      if (pid > 0)
        running[pid] = next;
      else
        finish(next, ends[next]);
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    struct rusage ru {};
    const pid_t pid = wait4(-1, &status, 0, &ru);
    if (pid < 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    ends[it->second] = end_of(status, ru);
    finish(it->second, ends[it->second]);
    running.erase(it);
  }
  if (shield_) {
    sigaction(SIGINT, &saved.int_, nullptr);
    sigaction(SIGQUIT, &saved.quit_, nullptr);
  }
  return ends;
}

}  // namespace sim::study
