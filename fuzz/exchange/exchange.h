// The .npy exchange: a case's tensors as files for a kernel that runs where
// this library does not (numpy, another framework, a CUDA program built on
// its own), and the kernel's outputs read back for the verdict. DIR holds:
//   case.json      the case (qcheck-replay reads it too)
//   manifest.json  every buffer and every tensor in it (see below)
//   NAME.npy       one per guarded allocation, named after the tensor that
//                  owns it: the whole allocation (sentinels, padding) as a
//                  1-D array of its element type (bf16 as <u2, e4m3 as |u1,
//                  the real dtype in the manifest). Inputs hold the case's
//                  values, outputs poison A (0xFF bytes).
// manifest.json "tensors": per tensor its name, role (input, output,
// untouched-output), buffer file, offset in elements from the start of that
// array, shape and strides in elements, dtype and real dtype; "aliased" when
// ql_nope is query_out's front; the scalars (q_scale, softmax_scale,
// head_scale) as numbers and fp32 bits. A kernel builds each tensor as a view
// (offset, shape, strides) into its file's array, so the strides survive,
// writes its outputs, and saves the output arrays back in place.
#pragma once

#include <string>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "numerics/profile.h"

namespace qcheck {

// Writes case.json, manifest.json and the buffers into `dir` (created with
// its parents if missing). "" on success, else why not.
std::string export_case(const Case& c, const std::string& dir);

// Writes every buffer of `set` as DIR/NAME.npy (what export_case writes,
// and what a kernel run in this process saves back).
std::string write_buffers(const TensorSet& set, const std::string& dir);

// Writes the oracle's outputs under `profile` as expected_NAME.npy, one
// C-contiguous array per output tensor in its outside shape.
std::string write_expected(const Case& c, const Profile& profile, const std::string& dir);

// Reads `dir` back: the case (case.json) and every buffer file into a set
// laid out as the case's plan says (poison A). One line naming the file and
// the field when a file is missing, corrupt, truncated, or has another dtype
// or shape than the plan's.
std::string import_run(const std::string& dir, Case* c, TensorSet* got);

// The numpy dtype of an element type ("<i8", "<f4", "<u2", "|u1") and its
// real name ("int64", "float32", "bfloat16", "float8_e4m3fn").
const char* npy_descr(ElementType type);
const char* real_dtype_name(ElementType type);

}  // namespace qcheck
