// cuDNN FP8 matmul (see cudnn_fp8_matmul.hpp): the graph, for b = batch (strides in elements):
//   A [b, m, k] strides [m*k, k, 1]; B [b, k, n] strides [n*k, 1, k] (kbench's B [b][n][k]);
//   C = matmul(A, B) in fp32; D = (C * a_scale) * b_scale, the scales [1, 1, 1] fp32; D [b, m, n]
//   strides [m*n, n, 1] in the output dtype.
#include "backends/cudnn/cudnn_fp8_matmul.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "backends/cudnn/cudnn_common.hpp"

namespace kbench::backends {
namespace {

namespace fe = cudnn_frontend;
using namespace cudnn_detail;

enum Uid : int64_t { kUidA = 1, kUidB, kUidAScale, kUidBScale, kUidD };

fe::DataType_t fp8_type(DType dtype) {
  return dtype == DType::fp8_e5m2 ? fe::DataType_t::FP8_E5M2 : fe::DataType_t::FP8_E4M3;
}

std::shared_ptr<fe::graph::Graph> make_graph(const CudnnFp8MatmulShape& s) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  const auto a = graph->tensor(fe::graph::Tensor_attributes()
                                   .set_name("A")
                                   .set_uid(kUidA)
                                   .set_dim({s.batch, s.m, s.k})
                                   .set_stride({s.m * s.k, s.k, 1})
                                   .set_data_type(fp8_type(s.a_dtype)));
  const auto b = graph->tensor(fe::graph::Tensor_attributes()
                                   .set_name("B")
                                   .set_uid(kUidB)
                                   .set_dim({s.batch, s.k, s.n})
                                   .set_stride({s.n * s.k, 1, s.k})
                                   .set_data_type(fp8_type(s.b_dtype)));
  const auto scale = [&](const char* name, int64_t uid) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({1, 1, 1})
                             .set_stride({1, 1, 1})
                             .set_data_type(fe::DataType_t::FLOAT));
  };
  const auto a_scale = scale("a_scale", kUidAScale);
  const auto b_scale = scale("b_scale", kUidBScale);
  const auto product = graph->matmul(a, b, fe::graph::Matmul_attributes().set_name("matmul").set_compute_data_type(fe::DataType_t::FLOAT));
  product->set_data_type(fe::DataType_t::FLOAT);
  const auto scaled = graph->pointwise(product, a_scale,
                                       fe::graph::Pointwise_attributes().set_name("a_scale").set_mode(fe::PointwiseMode_t::MUL));
  scaled->set_data_type(fe::DataType_t::FLOAT);
  const auto d = graph->pointwise(scaled, b_scale,
                                  fe::graph::Pointwise_attributes().set_name("b_scale").set_mode(fe::PointwiseMode_t::MUL));
  d->set_output(true).set_uid(kUidD).set_data_type(io_data_type(s.out_dtype));
  return graph;
}

}  // namespace

struct CudnnFp8Matmul::Planned {
  PlannedGraph graph;
};

std::optional<std::string> cudnn_fp8_matmul_unsupported(const CudnnFp8MatmulShape& s) {
  if (!is_fp8(s.a_dtype) || !is_fp8(s.b_dtype)) return "cuDNN's FP8 matmul takes fp8_e4m3 / fp8_e5m2 operands";
  if (s.out_dtype != DType::bfloat16 && s.out_dtype != DType::float16) {
    return "kbench's cuDNN FP8 matmul writes bfloat16 or float16";
  }
  int sm = 0;
  if (const auto why = library_or_device_unsupported(90000, "FP8 matmuls", sm)) return why;
  if (sm < 89) return "cuDNN's FP8 matmul needs sm_89+ (FP8 tensor cores)";
  auto graph = make_graph(s);
  return validation_unsupported(*graph);
}

CudnnFp8Matmul::CudnnFp8Matmul(const CudnnFp8MatmulShape& shape)
    : planned_(std::make_unique<Planned>(Planned{PlannedGraph(make_graph(shape), {kUidA, kUidB, kUidAScale, kUidBScale, kUidD})})) {}

CudnnFp8Matmul::~CudnnFp8Matmul() = default;
CudnnFp8Matmul::CudnnFp8Matmul(CudnnFp8Matmul&&) noexcept = default;
CudnnFp8Matmul& CudnnFp8Matmul::operator=(CudnnFp8Matmul&&) noexcept = default;

void CudnnFp8Matmul::run(const void* a, const void* b, const float* a_scale, const float* b_scale, void* d,
                         cudaStream_t stream) {
  PlannedGraph& g = planned_->graph;
  g.bind(kUidA, a);
  g.bind(kUidB, b);
  g.bind(kUidAScale, a_scale);
  g.bind(kUidBScale, b_scale);
  g.bind(kUidD, d);
  g.execute(stream);
}

}  // namespace kbench::backends
