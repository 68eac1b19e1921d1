// The C API's entry points on a fused_k case (ops/fused_k/door): its plan
// is one allocation, the launch's arena, with every tensor a view into it;
// a run starts from the arena with poison A or B; the verdict compares every
// byte. The entry points of buffers.cc call these once they see a fused_k
// case and have checked its buffers. Internal to capi/.
#pragma once

#include <string>

#include "capi/capi_edge.h"

namespace qcheck::capi {

qcheck_status fused_k_plan_buffers(const qcheck::fused_k::FusedKCase& c, qcheck_buffer_info* out, size_t capacity,
                                   size_t* count, std::string& why);
qcheck_status fused_k_plan_tensors(const qcheck::fused_k::FusedKCase& c, qcheck_tensor_info* out, size_t capacity,
                                   size_t* count, std::string& why);
void fused_k_fill(const qcheck::fused_k::FusedKCase& c, int poison, uint8_t* const* buffers);
qcheck_status fused_k_expected(const qcheck::fused_k::FusedKCase& c, const char* profile, uint8_t* const* buffers,
                               std::string& why);
// The verdict into *out (its text says what differs); the profile is checked first.
qcheck_status fused_k_judge(const qcheck::fused_k::FusedKCase& c, const qcheck_verdict_options* options,
                            const uint8_t* const* run_a, const uint8_t* const* run_b, qcheck_verdict** out,
                            std::string& why);

}  // namespace qcheck::capi
