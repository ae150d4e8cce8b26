// The C names of standalone sources (codegen/emit_standalone.h): the names `cotangent emit`
// gives (cot_OP_FN) are accepted; keywords, names reserved to the implementation and names of
// the generated run time are refused, with the reason.
#include "codegen/emit_standalone.h"

#include <gtest/gtest.h>

#include <string>

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

TEST(EmitStandaloneNames, accepts_the_names_emit_gives) {
  for (const char* ok : {"cot_fn_free", "cot_fn_int", "cot_grad_g", "cot_fn_grad_g",
                         "cot_value_and_grad_loss", "cot_fn___x", "cot_fn_NULL", "my_model"}) {
    EXPECT_EQ(invalid_c_name(ok), std::nullopt) << ok;
  }
}

TEST(EmitStandaloneNames, refuses_keywords_reserved_and_run_time_names) {
  EXPECT_EQ(invalid_c_name("int"), "is a keyword of C or C++");
  EXPECT_EQ(invalid_c_name("return"), "is a keyword of C or C++");
  EXPECT_EQ(invalid_c_name("not_eq"), "is a keyword of C or C++");
  EXPECT_EQ(invalid_c_name("_Exit"),
            "is reserved to the C and C++ implementations (it starts with `_`)");
  EXPECT_EQ(invalid_c_name("1f"), "is not a C identifier");
  EXPECT_EQ(invalid_c_name("a-b"), "is not a C identifier");
  EXPECT_EQ(invalid_c_name(""), "is not a C identifier");
  for (const char* rt :
       {"cot_ctx", "cot_rt", "cot_entry", "cot_message", "cot_simd_exp", "COT_VEC_22"}) {
    EXPECT_EQ(invalid_c_name(rt), "is a name of the generated code's run time") << rt;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
