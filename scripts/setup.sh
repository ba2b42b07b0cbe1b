#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages tensortune builds, tests and benchmarks with, but only those
# missing: a machine that has them all is left untouched and no `apt-get update` runs. Then, when
# CUDA is installed, puts its libraries on the loader path (NVRTC loads libnvrtc-builtins by bare
# name). Non-interactive and safe to run any number of times.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build llvm-19-dev zlib1g-dev libzstd-dev
  libxgboost-dev libfmt-dev libsqlite3-dev libgtest-dev libbenchmark-dev libonnx-dev libprotobuf-dev
  libdnnl-dev libopenblas-dev python3 clang-format pkg-config
  pybind11-dev python3-dev python3-numpy python3-pytest
  libpq-dev postgresql-15 iproute2
  clang-19 libclang-rt-19-dev
  chromium fonts-dejavu-core
)

# Root runs apt directly; anyone else goes through sudo when there is one.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  fi
fi

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! installed "$pkg"; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
    echo "setup.sh: missing packages: ${missing[*]}; run this script as root (or install sudo)" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
else
  echo "setup.sh: all ${#PACKAGES[@]} packages present"
fi

# CUDA is optional and not a Debian package: only touch the loader path when it is there.
if [ -d /usr/local/cuda/lib64 ]; then
  # grep without -q reads all of ldconfig's output, so pipefail never sees a SIGPIPE.
  if ! ldconfig -p | grep 'libnvrtc-builtins\.so\.13' >/dev/null; then
    echo "setup.sh: adding /usr/local/cuda/lib64 to the loader path"
    echo /usr/local/cuda/lib64 | "${SUDO[@]}" tee /etc/ld.so.conf.d/cuda.conf >/dev/null
    "${SUDO[@]}" ldconfig
  fi
fi
