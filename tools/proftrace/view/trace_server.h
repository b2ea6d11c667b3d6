// Serves one trace file to the Perfetto UI on 127.0.0.1 (`proftrace view`).
//
// The UI at https://ui.perfetto.dev opens `#!/?url=http://127.0.0.1:9001/NAME`
// by fetching NAME cross-origin, so the response carries CORS headers for the
// UI's origin (and answers the preflight Chrome's local-network checks send).
// Its content security policy lets it fetch from port 9001 only; on any other
// port the server also serves a small page at "/" that fetches the trace
// itself and hands it to a UI tab by postMessage (Perfetto's documented
// "deep linking" route), so a busy 9001 still gets the trace into the UI.
//
// Nothing else is served: other paths get 404, other methods 405; a Host
// header other than 127.0.0.1/localhost:PORT gets 403 (a page that rebinds
// its own domain to 127.0.0.1 cannot read the trace), and so does an Origin
// other than the UI's or this server's own (CORS alone would keep the bytes
// from that page but still send them, and count the fetch).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace proflaunch::tools::view {

inline constexpr int kUiPort = 9001;  // the only port ui.perfetto.dev's CSP lets it fetch from
inline constexpr const char* kPerfettoUiOrigin = "https://ui.perfetto.dev";

struct ServeOptions {
  std::string file;                        // the trace to serve
  std::string origin = kPerfettoUiOrigin;  // the UI allowed to read it (CORS)
  int port = kUiPort;                      // first port tried; 0: any free port
  int port_tries = 10;                     // port, port + 1, ... until one binds
};

class TraceServer {
 public:
  TraceServer();
  ~TraceServer();
  TraceServer(const TraceServer&) = delete;
  TraceServer& operator=(const TraceServer&) = delete;

  // Opens the file, binds 127.0.0.1 and starts answering on a thread. False
  // with the reason when the file cannot be read or no port could be bound.
  bool start(const ServeOptions& options, std::string* error);
  void stop();

  int port() const { return port_; }
  // The path the trace is served under: "/" + the file's name, percent-encoded.
  const std::string& trace_path() const { return trace_path_; }
  std::string trace_url() const;
  // Whether the UI can fetch trace_url() itself; if not, open opener_url().
  bool ui_fetches_directly() const;
  std::string ui_link() const;     // the UI's URL with ?url= pointing here
  std::string opener_url() const;  // the page at "/" (served when !ui_fetches_directly())
  uint64_t file_bytes() const { return file_bytes_; }

  // Blocks until one GET has sent the whole trace (true), `timeout` passed
  // (0: no limit) or `interrupted()` returned true (false).
  template <typename Interrupted>
  bool wait_for_fetch(std::chrono::milliseconds timeout, Interrupted interrupted);

  uint64_t fetches() const;
  uint64_t refused() const;

 private:
  bool bind_first_free(const ServeOptions& options, std::string* error);
  void install_handlers();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listening_done_ = false;
  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  int port_ = 0;
  std::string origin_;
  std::string trace_path_;
  std::string name_;

  mutable std::mutex mutex_;
  std::condition_variable fetched_cv_;
  uint64_t fetches_ = 0;  // GETs that sent every byte
  uint64_t refused_ = 0;
};

template <typename Interrupted>
bool TraceServer::wait_for_fetch(std::chrono::milliseconds timeout, Interrupted interrupted) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  while (fetches_ == 0) {
    if (interrupted()) return false;
    if (timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) return false;
    fetched_cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return true;
}

// "a b.pftrace" -> "a%20b.pftrace": everything but RFC 3986's unreserved
// characters is percent-encoded.
std::string percent_encode(const std::string& text);

}  // namespace proflaunch::tools::view
