#include "gradbench/eval.h"

namespace cot::gradbench {

const std::map<std::string, Eval>& evals() {
  static const std::map<std::string, Eval> kEvals = [] {
    std::map<std::string, Eval> m;
    for (Eval e :
         {hello_eval(), gmm_eval(), ba_eval(), ht_eval(), lstm_eval(), lse_eval(), llsq_eval(),
          kmeans_eval(), ode_eval(), det_eval(), particle_eval(), saddle_eval()})
      m.emplace(e.name, std::move(e));
    return m;
  }();
  return kEvals;
}

}  // namespace cot::gradbench
