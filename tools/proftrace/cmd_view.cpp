// proftrace view FILE... [--port 9001]: convert if needed, serve on
// 127.0.0.1 and print (and open) the Perfetto UI link; exit once the UI has
// fetched the trace, or on Ctrl-C.
#include <CLI/CLI.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>

#include "tools/proftrace/commands.h"
#include "tools/proftrace/emit/protobuf_emitter.h"
#include "tools/proftrace/view/trace_server.h"

extern char** environ;

namespace proflaunch::tools {

namespace {

constexpr int kExitInterrupted = 130;  // as a shell reports SIGINT

volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// SIGINT and SIGTERM set g_interrupted while it lives.
class InterruptHandler {
 public:
  InterruptHandler() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    g_interrupted = 0;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptHandler() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Already converted: served as it is.
bool is_converted_name(std::string_view name) {
  return is_protobuf_name(name) || name.ends_with(".json") || name.ends_with(".json.gz");
}

// "run.pftrace" -> "run.converting.pftrace" (and .json, .pftrace.gz alike).
std::string partial_name(const std::string& path) {
  for (std::string_view ending : {".pftrace.gz", ".pftrace", ".json"}) {
    if (std::string_view(path).ends_with(ending))
      return path.substr(0, path.size() - ending.size()) + ".converting" + std::string(ending);
  }
  return path + ".converting";
}

// A file and the shards after it ("run.2.pftrace", ...), where they exist.
void remove_with_shards(const std::string& path) {
  std::remove(path.c_str());
  for (size_t index = 2; std::remove(emit::shard_path(path, index).c_str()) == 0; ++index) {
  }
}

std::string megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

bool has_display() {
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

// xdg-open (which honours $BROWSER) in the background; false if it could not start.
bool open_in_browser(const std::string& url) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  char program[] = "xdg-open";
  std::string argument = url;
  char* argv[] = {program, argument.data(), nullptr};
  const int rc = posix_spawnp(&pid, program, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0;
}

std::string ssh_hint(int port) {
  char host[256] = "this-host";
  gethostname(host, sizeof host - 1);
  const char* user = std::getenv("USER");
  const std::string forward = std::to_string(port) + ":127.0.0.1:" + std::to_string(port);
  return "ssh -L " + forward + " " + (user != nullptr && *user != '\0' ? std::string(user) + "@" : "") + host;
}

// The file to serve: the input itself when it is already converted, else the
// conversion next to it (reused while it is newer than every input).
bool resolve_served_file(const ViewCommand& command, std::string* served, std::FILE* err) {
  struct stat info {};
  int64_t newest_input = 0;
  for (const std::string& input : command.inputs) {
    if (stat(input.c_str(), &info) != 0) {
      std::fprintf(err, "proftrace: %s: %s\n", input.c_str(), std::strerror(errno));
      return false;
    }
    newest_input = std::max<int64_t>(newest_input, info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec);
  }
  if (is_converted_name(command.inputs.front())) {
    if (command.inputs.size() > 1 || !command.output.empty()) {
      std::fprintf(err, "proftrace: view serves one converted file as it is (got %zu inputs%s); "
                        "give it proflaunch traces to convert several together\n",
                   command.inputs.size(), command.output.empty() ? "" : " and -o");
      return false;
    }
    *served = command.inputs.front();
    return true;
  }
  *served = command.output.empty() ? default_convert_output(command.inputs.front(), true) : command.output;
  if (*served == "-") {
    std::fprintf(err, "proftrace: view needs a file to serve, not stdout (-o -)\n");
    return false;
  }
  if (stat(served->c_str(), &info) == 0 && info.st_size > 0 &&
      info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec >= newest_input) {
    std::fprintf(err, "proftrace: %s is newer than the trace: serving it (delete it to convert again)\n",
                 served->c_str());
    return true;
  }
  // Converted under a temporary name and renamed when complete: a Ctrl-C in
  // the middle must not leave a file the next view would take as done.
  const std::string partial = partial_name(*served);
  remove_with_shards(partial);
  ConvertCommand convert;
  convert.inputs = command.inputs;
  convert.output = partial;
  convert.progress = isatty(STDERR_FILENO) != 0;
  convert.quiet = true;  // its summary would name the temporary file; warnings still show
  if (run_convert(convert, err) != kExitOk) return false;
  remove_with_shards(*served);
  size_t files = 0;
  for (size_t index = 1;; ++index) {
    const std::string from = emit::shard_path(partial, index);
    if (index > 1 && stat(from.c_str(), &info) != 0) break;
    if (std::rename(from.c_str(), emit::shard_path(*served, index).c_str()) != 0) {
      std::fprintf(err, "proftrace: cannot rename %s to %s: %s\n", from.c_str(),
                   emit::shard_path(*served, index).c_str(), std::strerror(errno));
      return false;
    }
    files = index;
  }
  std::fprintf(err, "proftrace: converted %s to %s\n", command.inputs.front().c_str(), served->c_str());
  if (files > 1)
    std::fprintf(err, "proftrace: note: the conversion was split into %zu files (--max-size): this serves the "
                      "first; `proftrace view %s` and so on for the others\n",
                 files, emit::shard_path(*served, 2).c_str());
  return true;
}

}  // namespace

int run_view(const ViewCommand& command, std::FILE* out, std::FILE* err) {
  try {
    if (command.inputs.empty()) {
      std::fprintf(err, "proftrace: view needs a trace file\n");
      return kExitError;
    }
    std::string served;
    if (!resolve_served_file(command, &served, err)) return kExitError;

    // Before anything is printed: a Ctrl-C right after the link must still
    // end the wait cleanly.
    const InterruptHandler interrupts;
    view::ServeOptions options;
    options.file = served;
    options.origin = command.origin;
    options.port = command.port;
    view::TraceServer server;
    std::string error;
    if (!server.start(options, &error)) {
      std::fprintf(err, "proftrace: cannot serve %s: %s\n", served.c_str(), error.c_str());
      if (error.find("in use") != std::string::npos)
        std::fprintf(err, "proftrace: stop what holds them (another proftrace view, or trace_processor --httpd), "
                          "or pick others with --port\n");
      return kExitError;
    }
    if (server.port() != command.port)
      std::fprintf(err, "proftrace: port %d is in use (another proftrace view, or trace_processor --httpd?): "
                        "serving on %d instead\n",
                   command.port, server.port());

    std::fprintf(out, "proftrace: serving %s (%s) at %s\n", served.c_str(), megabytes(server.file_bytes()).c_str(),
                 server.trace_url().c_str());
    std::string link;
    if (server.ui_fetches_directly()) {
      link = server.ui_link();
      std::fprintf(out, "Open it in the Perfetto UI:\n\n    %s\n\n", link.c_str());
    } else {
      link = server.opener_url();
      std::fprintf(out,
                   "The Perfetto UI fetches only from port %d, so open this page, which hands the trace to "
                   "the UI (the UI asks once whether to trust it):\n\n    %s\n\n",
                   view::kUiPort, link.c_str());
    }
    std::fprintf(out, "On a remote machine, forward the port from your own machine first, then open the link there:\n"
                      "    %s\n",
                 ssh_hint(server.port()).c_str());
    if (command.open_browser && has_display())
      std::fprintf(out, "%s\n", open_in_browser(link) ? "Opening it in your browser (xdg-open)."
                                                      : "Could not start xdg-open: open the link yourself.");
    std::fprintf(out, "Waiting for the UI to fetch the trace (Ctrl-C to stop)...\n");
    std::fflush(out);

    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(command.timeout_s * 1000));
    const bool fetched = server.wait_for_fetch(timeout, [] { return g_interrupted != 0; });
    server.stop();

    if (fetched) {
      std::fprintf(out, "proftrace: the UI fetched %s; done\n", served.c_str());
      return kExitOk;
    }
    if (g_interrupted != 0) {
      std::fprintf(err, "proftrace: stopped before the trace was fetched\n");
      return kExitInterrupted;
    }
    std::fprintf(err, "proftrace: nothing fetched the trace within %g s (--timeout); %s is still there to open\n",
                 command.timeout_s, served.c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace: view failed: %s\n", e.what());
    return kExitError;
  }
}

void add_view_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<ViewCommand>();
  CLI::App* sub = app.add_subcommand(
      "view", "Open a trace in the Perfetto UI (ui.perfetto.dev): converts it if needed, serves it on 127.0.0.1 "
              "and prints the link; exits once the UI has fetched it, or on Ctrl-C");
  sub->add_option("files", command->inputs,
                  "proflaunch traces (.trace, .part; converted together), or one converted file (.pftrace, "
                  ".pftrace.gz, .json) served as it is")
      ->required();
  sub->add_option("-o,--output", command->output,
                  "where the conversion goes (default: next to the first input, NAME.pftrace; reused while it "
                  "is newer than the trace)");
  sub->add_option("-p,--port", command->port,
                  "port on 127.0.0.1; ui.perfetto.dev fetches only from 9001, on any other port (including the "
                  "next free one when the port is in use) a local page hands the trace to the UI")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  sub->add_option("--origin", command->origin,
                  "the UI allowed to fetch the trace (CORS), for a self-hosted Perfetto UI")
      ->capture_default_str()
      ->check([](const std::string& origin) {
        static const std::regex kOrigin(R"(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)");
        return std::regex_match(origin, kOrigin) ? std::string()
                                                 : "an origin is scheme://host[:port], e.g. https://ui.perfetto.dev";
      });
  sub->add_flag("!--no-browser", command->open_browser, "only print the link, even when there is a display");
  sub->add_option("--timeout", command->timeout_s, "stop waiting for the UI after this many seconds (0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->callback([command, &exit_code] { exit_code = run_view(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
