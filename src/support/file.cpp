// SPDX-License-Identifier: Apache-2.0
// See file.h.
#include "tensortune/support/file.h"

#include "tensortune/support/error.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace tensortune::support {

std::string temp_path_beside(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid())))
      .string();
}

void write_file_atomically(const std::string& path,
                           std::string_view bytes,
                           const std::string& what) {
  const std::string temp = temp_path_beside(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out.good()) {
      std::remove(temp.c_str());
      throw UserError(what + ": cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw UserError(what + ": cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace tensortune::support
