// SPDX-License-Identifier: MIT
#include "model_client.hpp"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>
#include <llmdlq/llm/openai_compatible_client.hpp>

namespace llmdlq::cli {

provider_profile provider_of(std::string_view url) {
  const auto host_at = url.find("://");
  std::string_view host = host_at == std::string_view::npos ? url : url.substr(host_at + 3);
  host = host.substr(0, host.find_first_of(":/"));
  if (host == "api.openai.com") return provider_profile::openai_strict;
  if (host == "generativelanguage.googleapis.com") return provider_profile::gemini;
  if (host == "api.anthropic.com") return provider_profile::anthropic;
  return provider_profile::full;
}

expected<std::unique_ptr<llm_client>, std::string> open_model_client(const std::string& url,
                                                                     const std::string& api_key_env,
                                                                     std::chrono::milliseconds timeout) {
  std::string api_key;
  if (!api_key_env.empty()) {
    const char* key = std::getenv(api_key_env.c_str());
    if (key == nullptr || *key == '\0') return unexpected(fmt::format("${} holds no API key", api_key_env));
    api_key = key;
  }
  openai_compatible_client_options options;
  options.base_url = url;
  options.api_key = std::move(api_key);
  options.timeout = timeout;
  auto opened = openai_compatible_client::open(std::move(options));
  if (!opened) return unexpected(opened.error().message);
  return std::unique_ptr<llm_client>(std::make_unique<openai_compatible_client>(std::move(*opened)));
}

}  // namespace llmdlq::cli
