// SPDX-License-Identifier: MIT
// The model a command asks (`llmdlq replay`, `llmdlq eval`): an
// OpenAI-compatible server named by URL, its key read from the environment.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <llmdlq/expected.hpp>
#include <llmdlq/llm/client.hpp>
#include <llmdlq/provider_schema.hpp>

namespace llmdlq::cli {

/// The profile a server at `url` takes schemas by, when the command line names none:
/// openai for api.openai.com, gemini and anthropic for theirs, else full.
[[nodiscard]] provider_profile provider_of(std::string_view url);

/// A client of the OpenAI-compatible API at `url`, with the API key the
/// environment variable `api_key_env` holds (none when it is empty); why not,
/// for a person.
[[nodiscard]] expected<std::unique_ptr<llm_client>, std::string> open_model_client(const std::string& url,
                                                                                   const std::string& api_key_env,
                                                                                   std::chrono::milliseconds timeout);

}  // namespace llmdlq::cli
