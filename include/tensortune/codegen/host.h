// SPDX-License-Identifier: Apache-2.0
// The device a target runs on, as one stable line of text: the fingerprint that keys tuning
// records together with the target string, so one machine's records never serve another.
#pragma once

#include "tensortune/target/target.h"

#include <string>
#include <vector>

namespace tensortune::codegen {

/// One deterministic line describing the device code for `target` runs on. For an LLVM target,
/// the host: "cpu=<model name from /proc/cpuinfo>; mcpu=<LLVM host CPU>; features=<the enabled
/// ISA features that change generated code, sorted>; cores=<hardware threads>", e.g.
/// "cpu=AMD EPYC 9R14; mcpu=znver4; features=avx,avx2,avx512f,...,fma; cores=2". The same
/// machine always gives the same text; the target's own -mcpu/-mattr/-cores are not part of it
/// (they are in the target string). For a CUDA target, device 0 when one is usable:
/// "gpu=<name>; cc=<major.minor>; sms=<multiprocessors>", e.g. "gpu=NVIDIA H100 80GB HBM3;
/// cc=9.0; sms=132"; without a device "gpu=cuda; arch=<arch>".
std::string device_fingerprint(const target::Target& target);

/// The ISA features code for the CPU target `target` (its -mcpu with its implied features, and
/// -mattr) may use that this machine lacks, sorted ("avx512bw", "avx512f", ...); empty for a GPU
/// target, for "native", and when the host has them all. Only features LLVM's host detection
/// reports count, so tuning flags of a CPU model never do. Code using a missing feature dies of
/// SIGILL here. UserError as resolve_host for an unknown CPU or feature.
std::vector<std::string> missing_host_features(const target::Target& target);

/// The ISA features code for the CPU target `target` may use (its -mcpu with its implied
/// features, and -mattr), sorted; empty for a GPU target. "native" is resolved first, so it
/// gives this host's. A record tuned for "llvm -mcpu=znver3" on an AVX-512 host needs only
/// these of its device's features (driver::record_needs). UserError as resolve_host.
std::vector<std::string> target_features(const target::Target& target);

}  // namespace tensortune::codegen
