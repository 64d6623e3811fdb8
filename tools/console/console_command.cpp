// SPDX-License-Identifier: MIT
// `llmdlq console`: the moderation queue in a browser.
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "../cli.hpp"
#include "../commands.hpp"
#include "../options.hpp"
#include "../resolution.hpp"
#include "access.hpp"
#include "assets.hpp"
#include "connections.hpp"
#include "html.hpp"
#include "pages.hpp"
#include "store_access.hpp"

namespace llmdlq::cli {
namespace {

constexpr option options[] = {
    {"--listen", option_kind::value, "HOST:PORT",
     "where to listen (default 127.0.0.1:8080; port 0 picks a free one). Only a\n"
     "loopback address unless --allow-remote (then put TLS in front of it)."},
    {"--allow-remote", option_kind::flag, "", "listen on an address that is not a loopback one"},
    {"--schema", option_kind::value, "FILE", "the schema a correction must satisfy before it is stored"},
    {"--token-file", option_kind::value, "FILE",
     "a file (mode 600) whose first line is the access token; without it a random\n"
     "token is generated and printed. Log in at /login with it, or send\n"
     "`Authorization: Bearer TOKEN` (then a POST names its `operator`)."},
};
constexpr operand operands[] = {{"STORE", "give the DLQ to serve"}};

const command_syntax syntax{
    .command = "console",
    .operands = operands,
    .groups = {group("", options)},
    .about = "  STORE is sqlite:PATH[#TABLE] or postgres:CONNINFO[#[SCHEMA.]TABLE].\n"
             "  Serves the moderation queue to a browser: the pending letters with filters and counts, each\n"
             "  record with the spans its errors point at, claim / resolve / discard / requeue (each in the\n"
             "  record's operator log under the name given at login), and charts of the letters over time.\n",
    .stores = "",
    .closing = "Prints `listening on http://HOST:PORT/` once it accepts connections; stops on SIGINT or SIGTERM.\n"
               "Exit 2 for usage errors, an unusable DLQ, schema or token file, or an address it cannot bind.\n",
};

constexpr std::string_view session_cookie = "llmdlq_session";
// Without the id asked for: a link's path is not the console's to print.
constexpr std::string_view not_found_text = "No dead letter has the id in this link.";
constexpr std::size_t max_operator_name = 128;

const httplib::Headers security_headers{
    {"Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
     "frame-ancestors 'none'; base-uri 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "same-origin"},
    {"Cache-Control", "no-store"},
};

bool is_loopback(std::string_view host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

// The fields of a form POSTed as application/x-www-form-urlencoded, from
// its body only. (cpp-httplib's get_param_value answers from the URL's
// query too, and a token or CSRF token there lands in logs, the browser's
// history and Referer headers.)
httplib::Params form_fields(const httplib::Request& req) {
  httplib::Params fields;
  if (req.method == "POST" &&
      std::string_view(req.get_header_value("Content-Type")).starts_with("application/x-www-form-urlencoded")) {
    httplib::detail::parse_query_text(req.body, fields);
  }
  return fields;
}

std::string field(const httplib::Params& fields, const std::string& name) {
  const auto found = fields.find(name);
  return found == fields.end() ? std::string() : found->second;
}

// A name fit for the operator log: printable, one line, not blank.
std::optional<std::string> operator_name_of(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (name.empty() || name.size() > max_operator_name) return std::nullopt;
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return std::nullopt;
  }
  return std::string(name);
}

class console_server {
 public:
  console_server(dlq_reader dlq, schema correction_schema, std::string token)
      : dlq_(std::move(dlq)), schema_(std::move(correction_schema)), token_(std::move(token)) {
    server_.set_default_headers(security_headers);
    server_.set_payload_max_length(8u << 20);
    routes();
  }

  httplib::Server& server() noexcept { return server_; }

 private:
  // Who sent the request: a browser session (its cookie) or a client holding
  // the token. A token client has no CSRF token and needs none: no browser
  // sends an Authorization header on its own.
  struct caller {
    console_session session;
    bool by_token = false;
  };

  std::optional<caller> authenticate(const httplib::Request& req) {
    if (auto session = sessions_.find(cookie_value(req.get_header_value("Cookie"), session_cookie))) {
      return caller{std::move(*session), false};
    }
    const auto authorization = req.get_header_value("Authorization");
    if (authorization.starts_with("Bearer ") && same_secret(token_, std::string_view(authorization).substr(7))) {
      return caller{console_session{{}, {}, "", {}}, true};
    }
    return std::nullopt;
  }

  static void html(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "text/html; charset=utf-8");
  }

  static void redirect(httplib::Response& res, const std::string& to) {
    res.status = 303;
    res.set_header("Location", to);
  }

  // A POST's caller, after its Origin and CSRF token are checked; nothing
  // (and the response written) when refused.
  std::optional<caller> authorize_post(const httplib::Request& req, const httplib::Params& form,
                                       httplib::Response& res) {
    if (!origin_allowed(req.get_header_value("Origin"), req.get_header_value("Host"), req.get_header_value("Sec-Fetch-Site"))) {
      html(res, 403, message_page(nullptr, "Refused", "This form was sent from another site: nothing was changed."));
      return std::nullopt;
    }
    auto who = authenticate(req);
    if (!who) {
      html(res, 401, message_page(nullptr, "Not logged in", "Log in first: nothing was changed."));
      return std::nullopt;
    }
    if (who->by_token) {
      const auto name = operator_name_of(field(form, "operator"));
      if (!name) {
        html(res, 400, message_page(nullptr, "No operator", "Name the operator (field `operator`): nothing was changed."));
        return std::nullopt;
      }
      who->session.operator_name = *name;
    } else if (!csrf_matches(who->session, field(form, "csrf"))) {
      html(res, 403, message_page(&who->session, "Refused",
                                  "The form's CSRF token is missing or wrong: nothing was changed. Reload the page."));
      return std::nullopt;
    }
    return who;
  }

  void routes() {
    server_.Get("/assets/console.css", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(console_stylesheet), "text/css; charset=utf-8");
    });
    server_.Get("/assets/console.js", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(console_script), "text/javascript; charset=utf-8");
    });
    server_.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    server_.Get("/login", [](const httplib::Request&, httplib::Response& res) { html(res, 200, login_page()); });
    server_.Post("/login", [this](const httplib::Request& req, httplib::Response& res) { login(req, res); });
    server_.Post("/logout", [this](const httplib::Request& req, httplib::Response& res) {
      if (const auto who = authorize_post(req, form_fields(req), res)) {
        sessions_.close(who->session.id);
        res.set_header("Set-Cookie", fmt::format("{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0", session_cookie));
        redirect(res, "/login");
      }
    });
    server_.Get("/", [this](const httplib::Request& req, httplib::Response& res) { queue(req, res); });
    server_.Get("/charts", [this](const httplib::Request& req, httplib::Response& res) { charts(req, res); });
    server_.Get(R"(/records/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      show_record(req, res);
    });
    server_.Post(R"(/records/([^/]+)/(claim|resolve|discard|requeue))",
                 [this](const httplib::Request& req, httplib::Response& res) { act(req, res); });
  }

  void login(const httplib::Request& req, httplib::Response& res) {
    if (!origin_allowed(req.get_header_value("Origin"), req.get_header_value("Host"), req.get_header_value("Sec-Fetch-Site"))) {
      html(res, 403, login_page("This form was sent from another site."));
      return;
    }
    const auto form = form_fields(req);
    const auto name = operator_name_of(field(form, "operator"));
    if (!same_secret(token_, field(form, "token"))) {
      // Slows guessing: one wrong token at a time, however many connections.
      const std::lock_guard one_at_a_time(wrong_token_);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      html(res, 401, login_page("Wrong access token."));
      return;
    }
    if (!name) {
      html(res, 400, login_page("Give your name (one line, at most 128 characters): it goes into the operator log."));
      return;
    }
    const auto session = sessions_.open(*name);
    res.set_header("Set-Cookie", fmt::format("{}={}; HttpOnly; SameSite=Strict; Path=/", session_cookie, session.id));
    redirect(res, "/");
  }

  void queue(const httplib::Request& req, httplib::Response& res) {
    const auto who = authenticate(req);
    if (!who) return redirect(res, "/login");
    queue_filter filter;
    if (req.has_param("status")) {
      const auto status = parse_moderation_status(req.get_param_value("status"));
      if (!status) return html(res, 400, message_page(&who->session, "Bad request", "Unknown status."));
      filter.status = *status;
    }
    filter.category = req.get_param_value("category");
    filter.triage = req.get_param_value("triage");
    filter.failure_code = req.get_param_value("code");
    std::optional<moderation_cursor> after;
    if (req.has_param("after")) {
      after = parse_moderation_cursor(req.get_param_value("after"));
      if (!after) return html(res, 400, message_page(&who->session, "Bad request", "Not a page cursor."));
    }
    const auto page = dlq_.queue(filter, after, 50);
    const auto overview = page ? dlq_.counts() : expected<dlq_overview, moderation_error>{};
    if (!page || !overview) {
      return html(res, 503, message_page(&who->session, "Store unavailable",
                                         (page ? overview.error() : page.error()).message));
    }
    html(res, 200, queue_page_html(who->session, filter, *page, *overview, system_now()));
  }

  void charts(const httplib::Request& req, httplib::Response& res) {
    const auto who = authenticate(req);
    if (!who) return redirect(res, "/login");
    int days = 30;
    if (req.has_param("days")) {
      const auto text = req.get_param_value("days");
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), days);
      if (ec != std::errc() || end != text.data() + text.size() || days < 1 || days > 3660) {
        return html(res, 400, message_page(&who->session, "Bad request", "days must be between 1 and 3660."));
      }
    }
    const auto now = system_now();
    const auto overview = dlq_.overview(now - std::chrono::days(days - 1), now);
    if (!overview) return html(res, 503, message_page(&who->session, "Store unavailable", overview.error().message));
    html(res, 200, charts_page_html(who->session, *overview, days, system_now()));
  }

  void show_record(const httplib::Request& req, httplib::Response& res) {
    const auto who = authenticate(req);
    if (!who) return redirect(res, "/login");
    action_outcome outcome;
    outcome.notice = action_notice(req.get_param_value("done"));
    render_record(who->session, req.matches[1].str(), outcome, 200, res);
  }

  void render_record(const console_session& session, const std::string& dlq_id, const action_outcome& outcome,
                     int status, httplib::Response& res) {
    const auto record = dlq_.store().get(dlq_id);
    if (!record) return html(res, 503, message_page(&session, "Store unavailable", record.error().message));
    if (!*record) return html(res, 404, message_page(&session, "Not found", not_found_text));
    html(res, status, record_page_html(session, **record, outcome));
  }

  void act(const httplib::Request& req, httplib::Response& res) {
    const auto form = form_fields(req);
    const auto who = authorize_post(req, form, res);
    if (!who) return;
    const std::string dlq_id = req.matches[1].str();
    const std::string action_name = req.matches[2].str();
    moderation_request request{dlq_id, moderation_action::claim, who->session.operator_name, field(form, "note"),
                               std::nullopt, std::nullopt};
    for (const auto action : {moderation_action::claim, moderation_action::resolve, moderation_action::discard,
                              moderation_action::requeue}) {
      if (to_string(action) == action_name) request.action = action;
    }
    if (request.action == moderation_action::resolve) {
      const auto corrected = field(form, "corrected");
      if (auto errors = check_resolution(schema_, corrected); !errors.empty()) {
        action_outcome refused{"", "The correction was refused: nothing was stored.", std::move(errors), corrected};
        return render_record(who->session, dlq_id, refused, 422, res);
      }
      request.corrected = corrected;
    }
    const auto done = dlq_.store().act(request);
    if (done) return redirect(res, "/records/" + httplib::detail::encode_query_param(dlq_id) + "?done=" + action_name);
    const auto& error = done.error();
    switch (error.code) {
      case moderation_errc::not_found:
        return html(res, 404, message_page(&who->session, "Not found", not_found_text));
      case moderation_errc::invalid_transition:
        return render_record(who->session, dlq_id, {"", lost_race_text(dlq_id, action_name), {}, ""}, 409, res);
      case moderation_errc::invalid_resolution:
        return render_record(who->session, dlq_id, {"", "The store refused the correction: " + error.message, {},
                                                    request.corrected.value_or("")},
                             422, res);
      case moderation_errc::unreadable_record:
        return render_record(who->session, dlq_id, {"", error.message + ": nothing was changed.", {}, ""}, 409, res);
      case moderation_errc::store_unavailable:
        break;
    }
    html(res, 503, message_page(&who->session, "Store unavailable", error.message + " Nothing changed; try again."));
  }

  // Who acted first, from the record's log.
  std::string lost_race_text(const std::string& dlq_id, const std::string& action_name) {
    const auto record = dlq_.store().get(dlq_id);
    if (!record || !*record) return "Cannot " + action_name + " this record in its status: nothing was changed.";
    const auto& r = **record;
    std::string_view log = r.operator_log;
    while (!log.empty() && log.back() == '\n') log.remove_suffix(1);
    const auto last = log.substr(log.rfind('\n') == std::string_view::npos ? 0 : log.rfind('\n') + 1);
    return fmt::format("Cannot {}: the record is {}{}, nothing was changed.{}", action_name, to_string(r.status),
                       r.claimed_by.empty() ? "" : " (claimed by " + r.claimed_by + ")",
                       last.empty() ? "" : fmt::format(" Last action: {}", last));
  }

  dlq_reader dlq_;
  schema schema_;  ///< what a correction must satisfy
  std::string token_;
  session_table sessions_;
  std::mutex wrong_token_;
  guarded_server server_;
};

// The host and port of --listen; why not, when it is not HOST:PORT or not
// loopback without `allow_remote`.
expected<std::pair<std::string, int>, std::string> listen_address(const std::string& listen, bool allow_remote) {
  const auto colon = listen.rfind(':');
  int port = -1;
  std::string host = colon == std::string::npos ? std::string() : listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (colon != std::string::npos) {
    const auto [end, ec] = std::from_chars(listen.data() + colon + 1, listen.data() + listen.size(), port);
    if (ec != std::errc() || end != listen.data() + listen.size() || port < 0 || port > 65535) port = -1;
  }
  if (host.empty() || port < 0) return unexpected("--listen wants HOST:PORT, not " + listen);
  if (!is_loopback(host) && !allow_remote) {
    return unexpected(host + " is not a loopback address: add --allow-remote to listen there");
  }
  return std::pair{std::move(host), port};
}

}  // namespace

int console_command(arguments args) {
  const auto parsed = parse_arguments(syntax, args);
  if (!parsed) return parsed.error();
  const std::string_view target = parsed->operand(0);
  const std::string listen(parsed->value("--listen").value_or("127.0.0.1:8080"));
  std::optional<std::string> schema_path, token_path;
  if (const auto v = parsed->value("--schema")) schema_path = std::string(*v);
  if (const auto v = parsed->value("--token-file")) token_path = std::string(*v);
  const auto address = listen_address(listen, parsed->has("--allow-remote"));
  if (!address) {
    complain("console", address.error());
    return exit_usage;
  }
  const auto& [host, port] = *address;
  auto dlq = dlq_reader::open(target, false);
  if (!dlq) return usage_error(syntax, dlq.error());
  // Without --schema a correction need only be strict JSON.
  std::string schema_text = "true";
  if (schema_path) {
    auto text = read_file_bounded(*schema_path, file_kind::schema);
    if (!text) {
      complain("console", text.error().message);
      return exit_usage;
    }
    schema_text = std::move(*text);
  }
  auto correction_schema = compile_resolution_schema(schema_text);
  if (!correction_schema) {
    complain("console", "invalid schema " + schema_path.value_or("") + ": " + correction_schema.error());
    return exit_usage;
  }
  std::string token;
  if (token_path) {
    auto read = read_token_file(*token_path);
    if (!read) {
      complain("console", read.error());
      return exit_usage;
    }
    token = std::move(*read);
  } else {
    token = random_secret();
    std::cout << "access token: " << token << '\n';
  }

  // SIGINT and SIGTERM stop the server from this thread, not a handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  console_server console(std::move(*dlq), std::move(*correction_schema), std::move(token));
  auto& server = console.server();
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    complain("console", "cannot listen on " + listen);
    return exit_usage;
  }
  if (!parsed->has("--allow-remote")) {
    server.set_pre_routing_handler([bound](const httplib::Request& req, httplib::Response& res) {
      if (loopback_host_allowed(req.get_header_value("Host"), bound)) return httplib::Server::HandlerResponse::Unhandled;
      res.status = 421;
      res.set_content("This console answers to its loopback address only.\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  std::cout << fmt::format("listening on http://{}:{}/", host.find(':') == std::string::npos ? host : "[" + host + "]",
                           bound)
            << std::endl;
  std::thread serving([&server] { server.listen_after_bind(); });
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server.stop();
  serving.join();
  return exit_ok;
}

}  // namespace llmdlq::cli
