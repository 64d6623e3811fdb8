// SPDX-License-Identifier: MIT
// The umbrella header: everything the core library offers.
#pragma once

#include "llmdlq/config.hpp"
#include "llmdlq/expected.hpp"
#include "llmdlq/format.hpp"
#include "llmdlq/json_parser.hpp"
#include "llmdlq/regex.hpp"
#include "llmdlq/schema.hpp"
#include "llmdlq/version.hpp"
