# Conan 2 recipe: `conan create . -o "&:kafka=True"` builds and tests the
# package; each transport (and llm, the model client, crypto, the field
# cipher, and prometheus, the metrics' Collectable) is an option and a
# component, and stores (opening what a store spec names) a component always.
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir


class LlmdlqConan(ConanFile):
    name = "llmdlq"
    description = "Validation, local repair and dead-letter envelopes for LLM structured outputs"
    license = "MIT"
    url = "https://github.com/llmdlq/llmdlq"
    homepage = "https://github.com/llmdlq/llmdlq"
    topics = ("json-schema", "llm", "dead-letter-queue", "validation")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "sqlite": [True, False],
        "kafka": [True, False],
        "redis": [True, False],
        "postgres": [True, False],
        "llm": [True, False],
        "crypto": [True, False],
        "prometheus": [True, False],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "sqlite": True,
        "kafka": False,
        "redis": False,
        "postgres": False,
        "llm": False,
        "crypto": False,
        "prometheus": False,
    }
    exports_sources = "CMakeLists.txt", "LICENSE", "cmake/*", "include/*", "src/*", "schemas/*"

    # Each transport option builds one library: its CMake option, and the
    # package and component that library links.
    _transports = {
        "sqlite": ("LLMDLQ_WITH_SQLITE", "sqlite3/3.45.3", "sqlite3::sqlite3"),
        "kafka": ("LLMDLQ_WITH_KAFKA", "librdkafka/2.3.0", "librdkafka::rdkafka"),
        "redis": ("LLMDLQ_WITH_REDIS", "hiredis/1.2.0", "hiredis::hiredis"),
        "postgres": ("LLMDLQ_WITH_POSTGRES", "libpq/15.5", "libpq::pq"),
        "llm": ("LLMDLQ_WITH_LLM", "libcurl/8.6.0", "libcurl::curl"),
        "crypto": ("LLMDLQ_WITH_CRYPTO", "libsodium/1.0.18", "libsodium::libsodium"),
        "prometheus": ("LLMDLQ_WITH_PROMETHEUS", "prometheus-cpp/1.1.0", "prometheus-cpp::prometheus-cpp-core"),
    }
    # Whatever the options: a package holds the libraries and nothing else.
    _fixed_cache_variables = {
        "LLMDLQ_BUILD_TESTS": False,
        "LLMDLQ_BUILD_TOOLS": False,
        "LLMDLQ_BUILD_EXAMPLES": False,
        "LLMDLQ_BUILD_BENCHMARKS": False,
        "LLMDLQ_BUILD_FUZZERS": False,
        "LLMDLQ_INSTALL": True,
    }
    _core_requires = [
        "simdjson::simdjson",
        "boost::json",
        "boost::headers",
        "fmt::fmt",
        "pcre2::pcre2-8",
        "openssl::crypto",
    ]

    def set_version(self):
        header = load(self, os.path.join(self.recipe_folder, "include", "llmdlq", "version.hpp"))
        parts = [re.search(rf"#define LLMDLQ_VERSION_{part} +(\d+)", header).group(1)
                 for part in ("MAJOR", "MINOR", "PATCH")]
        self.version = ".".join(parts)

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # simdjson and Boost.JSON appear in the public headers.
        self.requires("simdjson/3.9.4", transitive_headers=True)
        self.requires("boost/1.85.0", transitive_headers=True)
        self.requires("fmt/10.2.1")
        self.requires("pcre2/10.42")
        self.requires("openssl/[>=3 <4]")
        for option, (_, reference, _) in self._transports.items():
            if self.options.get_safe(option):
                self.requires(reference)

    def validate(self):
        # llmdlq::expected is std::expected.
        check_min_cppstd(self, 23)

    def generate(self):
        toolchain = CMakeToolchain(self)
        for option, (variable, _, _) in self._transports.items():
            toolchain.cache_variables[variable] = bool(self.options.get_safe(option))
        toolchain.cache_variables.update(self._fixed_cache_variables)
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        CMake(self).install()
        # Conan writes the package's CMake and pkg-config files from package_info().
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "llmdlq")

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "llmdlq::core")
        core.set_property("cmake_target_aliases", ["llmdlq::llmdlq"])
        core.set_property("pkg_config_name", "llmdlq")
        core.libs = ["llmdlq"]
        core.requires = self._core_requires

        header_only = self.cpp_info.components["header_only"]
        header_only.set_property("cmake_target_name", "llmdlq::header_only")
        header_only.defines = ["LLMDLQ_HEADER_ONLY"]
        header_only.requires = self._core_requires

        for option, (_, _, component) in self._transports.items():
            if self.options.get_safe(option):
                transport = self.cpp_info.components[option]
                transport.set_property("cmake_target_name", f"llmdlq::{option}")
                transport.libs = [f"llmdlq_{option}"]
                transport.requires = ["core", component]

        # llmdlq::stores links the store transports the package was built with.
        stores = self.cpp_info.components["stores"]
        stores.set_property("cmake_target_name", "llmdlq::stores")
        stores.libs = ["llmdlq_stores"]
        stores.requires = ["core", "fmt::fmt"] + [option for option in ("sqlite", "postgres", "kafka", "redis")
                                                  if self.options.get_safe(option)]
