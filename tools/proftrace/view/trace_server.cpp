#include "tools/proftrace/view/trace_server.h"

#include <httplib.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tools/proftrace/html_text.h"

namespace proflaunch::tools::view {

namespace assets {
extern const char kOpenerPageHtml[];
}

namespace {

constexpr size_t kChunkBytes = 1 << 20;

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void replace_all(std::string& text, std::string_view placeholder, const std::string& value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
}

// httplib's default also sets SO_REUSEPORT, which would let a second server
// share a port that is in use instead of failing to bind it.
void reuse_address_only(int socket) {
  int yes = 1;
  setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

}  // namespace

std::string percent_encode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

TraceServer::TraceServer() = default;

TraceServer::~TraceServer() {
  stop();
  if (fd_ >= 0) close(fd_);
}

bool TraceServer::start(const ServeOptions& options, std::string* error) {
  fd_ = open(options.file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd_ < 0 || fstat(fd_, &info) != 0) {
    *error = options.file + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    *error = options.file + ": not a regular file";
    return false;
  }
  file_bytes_ = static_cast<uint64_t>(info.st_size);
  origin_ = options.origin;
  name_ = base_name(options.file);
  trace_path_ = "/" + percent_encode(name_);

  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(4); };
  server_->set_socket_options(reuse_address_only);
  server_->set_keep_alive_max_count(1);  // one request per connection: stop() is prompt
  server_->set_read_timeout(10, 0);
  install_handlers();
  if (!bind_first_free(options, error)) return false;
  listening_done_ = false;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listening_done_ = true;
  });
  // stop() only takes effect once the loop runs: wait for it.
  while (!server_->is_running() && !listening_done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (listening_done_) {
    *error = "cannot listen on 127.0.0.1:" + std::to_string(port_);
    return false;
  }
  return true;
}

bool TraceServer::bind_first_free(const ServeOptions& options, std::string* error) {
  if (options.port == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ > 0) return true;
    *error = std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
    return false;
  }
  const int tries = std::max(options.port_tries, 1);
  for (int port = options.port; port < options.port + tries && port <= 65535; ++port) {
    errno = 0;
    if (server_->bind_to_port("127.0.0.1", port)) {
      port_ = port;
      return true;
    }
    if (errno != EADDRINUSE) {
      *error = "cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
      return false;
    }
  }
  *error = tries == 1 ? "port " + std::to_string(options.port) + " is in use"
                      : "ports " + std::to_string(options.port) + "-" +
                            std::to_string(options.port + tries - 1) + " are all in use";
  return false;
}

void TraceServer::install_handlers() {
  using httplib::Request;
  using httplib::Response;
  server_->set_pre_routing_handler([this](const Request& request, Response& response) {
    const std::string host = request.get_header_value("Host");
    const std::string port = ":" + std::to_string(port_);
    // Browsers name the page's origin on cross-origin requests: only the UI,
    // or this server's own page, may read the trace (CORS alone would still
    // send the bytes and count the fetch).
    const std::string origin = request.get_header_value("Origin");
    const bool foreign_origin = !origin.empty() && origin != origin_ && origin != "http://" + host;
    const bool refuse = (host != "127.0.0.1" + port && host != "localhost" + port) || foreign_origin;
    const bool trace = request.path == trace_path_ || request.path == "/" + name_;
    const bool opener = request.path == "/" && !ui_fetches_directly();
    const bool read = request.method == "GET" || request.method == "HEAD";
    if (!refuse && trace && request.method == "OPTIONS") {
      // The preflight of a cross-origin request, including Chrome's
      // local-network one (Access-Control-Request-Private-Network).
      response.status = 204;
      response.set_header("Access-Control-Allow-Origin", origin_);
      response.set_header("Access-Control-Allow-Methods", "GET, HEAD");
      const std::string headers = request.get_header_value("Access-Control-Request-Headers");
      if (!headers.empty()) response.set_header("Access-Control-Allow-Headers", headers);
      response.set_header("Access-Control-Allow-Private-Network", "true");
      response.set_header("Access-Control-Max-Age", "60");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!refuse && read && (trace || opener)) return httplib::Server::HandlerResponse::Unhandled;
    {
      std::lock_guard lock(mutex_);
      ++refused_;
    }
    response.status = refuse ? 403 : read || request.method == "OPTIONS" ? 404 : 405;
    if (response.status == 405) response.set_header("Allow", "GET, HEAD, OPTIONS");
    response.set_content(refuse ? "proftrace view: refused: only " + origin_ + " may read the trace\n"
                                : "proftrace view serves one trace only: " + trace_path_ + "\n",
                         "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });

  auto serve_trace = [this](const Request&, Response& response) {
    response.set_header("Access-Control-Allow-Origin", origin_);
    response.set_header("Cache-Control", "no-cache");
    auto sent = std::make_shared<uint64_t>(0);
    response.set_content_provider(
        file_bytes_, "application/octet-stream",
        [this, sent](size_t offset, size_t length, httplib::DataSink& sink) {
          std::string buffer(std::min(length, kChunkBytes), '\0');
          const ssize_t got = pread(fd_, buffer.data(), buffer.size(), static_cast<off_t>(offset));
          if (got <= 0) return false;  // the file shrank under us: abort the response
          if (!sink.write(buffer.data(), static_cast<size_t>(got))) return false;
          *sent += static_cast<uint64_t>(got);
          if (*sent == file_bytes_) {
            std::lock_guard lock(mutex_);
            ++fetches_;
            fetched_cv_.notify_all();
          }
          return true;
        });
  };
  // Both spellings of the name: the encoded one we print, and the decoded one
  // httplib hands us after decoding the request's path.
  server_->Get("/.*", [this, serve_trace](const Request& request, Response& response) {
    if (request.path == "/") {
      std::string page = assets::kOpenerPageHtml;
      replace_all(page, "@TRACE_PATH@", html_escaped(trace_path_));
      replace_all(page, "@ORIGIN@", html_escaped(origin_));
      replace_all(page, "@NAME@", html_escaped(name_));
      replace_all(page, "@BYTES@", std::to_string(file_bytes_));
      response.set_header("Cache-Control", "no-cache");
      response.set_content(page, "text/html; charset=utf-8");
      return;
    }
    serve_trace(request, response);
  });
}

void TraceServer::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string TraceServer::trace_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + trace_path_;
}

bool TraceServer::ui_fetches_directly() const { return port_ == kUiPort || origin_ != kPerfettoUiOrigin; }

std::string TraceServer::ui_link() const { return origin_ + "/#!/?url=" + trace_url(); }

std::string TraceServer::opener_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

uint64_t TraceServer::fetches() const {
  std::lock_guard lock(mutex_);
  return fetches_;
}

uint64_t TraceServer::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace proflaunch::tools::view
