#!/usr/bin/env bash
# Installs the Debian packages ShardScope needs, only those that are missing.
# Idempotent; meant for root on a fresh Debian 12 machine (uses sudo when not root).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-svg-dev libgl-dev
  libqcustomplot-dev
  openmpi-bin libopenmpi-dev
  libopenblas-dev
  libdnnl-dev                   # oneDNN: AVX-512 fp32 and bf16-unit GEMMs (kernels/cpu/gemm.h)
  liburing-dev                  # the NVMe tier (ZeRO-Infinity): O_DIRECT through io_uring
  nlohmann-json3-dev
  libssl-dev                    # checkpoint checksums: OpenSSL's SHA-256
  ccache                        # the compiler launcher (cmake/ShardScopeCompilerCache.cmake)
  clang-format-14               # the tree's format, checked by the format_check test
  libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  xvfb xauth fonts-noto-cjk fonts-dejavu-core
  clang-14 libclang-rt-14-dev   # make fuzz: libFuzzer with ASan/UBSan (the fuzz preset)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
