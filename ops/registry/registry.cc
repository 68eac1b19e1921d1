#include "ops/registry/registry.h"

#include "ops/fused_k/op.h"
#include "ops/fused_q/op.h"

namespace qcheck {

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {&fused_q_op(), &fused_k::fused_k_op()};
  return ops;
}

const Op* find_op(const std::string& name) {
  for (const Op* op : all_ops()) {
    if (name == op->name()) return op;
  }
  return nullptr;
}

std::string op_names() {
  std::string names;
  for (const Op* op : all_ops()) names += (names.empty() ? "" : ", ") + std::string(op->name());
  return names;
}

}  // namespace qcheck
