#include "core/csv.hpp"

#include <filesystem>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "core/usage_error.hpp"

namespace kbench {
namespace {

// flashinfer_benchmark_utils.output_column_dict (the newest version found: attention's v_dtype to
// timing_metric, moe_comm, allreduce_comm, mixed_comm, mamba, gdn, kda, msa), every group in the
// reference's order, for every family the reference has, whether or not kbench has built it yet.
// The reference repeats some names across groups (num_tokens, top_k, weight_dtype, ...); kbench
// keeps each at its first place.
const std::vector<std::string>& reference_columns() {
  static const std::vector<std::string> columns = [] {
    const std::vector<std::vector<std::string>> groups = {
        // perf
        {"routine", "median_time", "std_time", "tflops", "tb_per_sec", "backend", "resolved_backend", "autotuned",
         "autotune_winner", "autotune_tactic"},
        // attention
        {"s_qo", "s_kv", "head_dim_qk", "head_dim_vo", "head_dim_ckv", "head_dim_kpe", "causal", "q_dtype", "kv_dtype",
         "v_dtype", "avg_actual_seq_len", "random_actual_seq_len", "is_var_seq", "cute_dsl_impl", "timing_metric",
         "row_activity_mode", "calls_per_sample"},
        // dsv4_sparse_mla
        {"swa_topk", "compressed_topk", "compressed_kv_len", "compressed_page_size"},
        // gemm
        {"n", "group_size", "tile_size", "scale_major_mode", "mma_sm", "use_128x4_sf_layout", "use_nvfp4", "bias"},
        // moe
        {"num_tokens", "intermediate_size", "num_experts", "top_k", "block_m", "n_group", "topk_group",
         "routed_scaling_factor", "local_expert_offset", "local_num_experts", "routing_method", "use_shuffled_weight",
         "weight_layout", "use_routing_bias", "use_routing_scales_on_input", "weight_dtype", "activation_type",
         "quant_variant", "autotune", "tactic", "refcheck_passed", "fp4_mode", "cold_l2_cache",
         "prequantized_median_time", "prequantized_std_time", "cutlass_variant", "quantized_input", "tp_size",
         "tp_rank", "ep_size", "ep_rank"},
        // moe_comm
        {"num_tokens", "num_experts", "top_k", "ep_size", "max_num_tokens"},
        // allreduce_comm
        {"num_tokens", "ar_backend", "pattern", "layout_code"},
        // mixed_comm
        {"local_bs", "op_name", "mode_name", "local_tp_size", "local_dp_size", "inter_tp_size", "inter_dp_size"},
        // norm
        {"num_heads", "scale", "eps", "use_global_scale", "dit_mode", "ppf", "pph", "ppw"},
        // quantization
        {"alignment", "global_scale", "sf_layout", "do_shuffle", "sf_vec_size"},
        // sampling
        {"vocab_size", "top_k", "top_p", "min_p", "temperature", "num_speculate_tokens", "filter_apply_order",
         "max_len", "num_rows"},
        // topk_varlen
        {"max_seq_len"},
        // rope
        {"seq_len", "head_dim", "rotary_dim", "no_rope_dim", "rope_theta", "rope_scale", "interleave", "kv_layout"},
        // mamba
        {"nheads", "dim", "dstate", "ngroups", "cache_steps", "state_dtype", "weight_dtype", "has_z", "dt_softplus"},
        // gdn
        {"num_q_heads", "num_k_heads", "num_v_heads", "head_size", "state_layout", "pool_mode", "update_state",
         "use_qk_l2norm"},
        // kda
        {"kda_variant", "kda_variant_policy", "sm_count", "packed", "has_initial_state"},
        // msa
        {"topk", "max_k_tiles", "total_q", "total_kv"},
        // general
        {"batch_size", "hidden_size", "input_dtype", "out_dtype", "quant_dtype", "m", "k", "num_qo_heads",
         "num_kv_heads", "page_size", "enable_pdl", "is_sf_swizzled_layout", "refcheck", "no_cuda_graph", "use_cupti",
         "allow_output_mismatch", "random_seed", "case_tag", "generate_repro_command", "repro_command"},
    };
    std::vector<std::string> flat;
    std::set<std::string, std::less<>> seen;
    for (const auto& group : groups) {
      for (const auto& name : group) {
        if (seen.insert(name).second) flat.push_back(name);
      }
    }
    return flat;
  }();
  return columns;
}

// What kbench adds: the timer that really ran, the spread and the median's noise, the refcheck
// verdict, and the GPU's clocks, power and clock limits while it was measured.
const std::vector<std::string>& kbench_columns() {
  static const std::vector<std::string> columns = {
      "timer",           "calls_per_graph",  "min_time",         "max_time",     "num_samples",
      "noise",           "gpu_name",         "refcheck_status",  "baseline",     "speedup_over_baseline",
      "sm_clock_mhz",    "sm_clock_min_mhz", "sm_clock_max_mhz", "memory_clock_mhz", "power_w",
      "power_max_w",     "power_limit_w",    "temperature_c",    "throttle_reasons", "stage_times"};
  return columns;
}

}  // namespace

std::vector<std::string> csv_columns(const RoutineRegistry& registry) {
  std::vector<std::string> columns = reference_columns();
  columns.insert(columns.end(), kbench_columns().begin(), kbench_columns().end());
  std::set<std::string, std::less<>> present(columns.begin(), columns.end());
  for (const auto& routine : registry.all()) {
    for (const FlagSpec& flag : routine->flags()) {
      const std::string column = routine->csv_column(flag);
      if (present.insert(column).second) columns.push_back(column);
    }
  }
  return columns;
}

std::string csv_escape(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line.push_back(',');
    line += csv_escape(fields[i]);
  }
  return line;
}

std::vector<std::string> parse_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back().push_back(c);
    }
  }
  return fields;
}

namespace {

// Where an existing header and kbench's first differ, in words.
std::string header_difference(const std::vector<std::string>& file, const std::vector<std::string>& ours) {
  std::size_t i = 0;
  while (i < file.size() && i < ours.size() && file[i] == ours[i]) ++i;
  const auto name = [](const std::vector<std::string>& h, std::size_t k) {
    return k < h.size() ? "'" + h[k] + "'" : std::string("nothing");
  };
  return std::to_string(file.size()) + " columns in the file, " + std::to_string(ours.size()) + " in kbench's; column " +
         std::to_string(i + 1) + " is " + name(file, i) + " there and " + name(ours, i) + " here";
}

}  // namespace

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns, std::string_view flag)
    : path_(path), columns_(std::move(columns)) {
  const std::string header = csv_line(columns_);
  std::error_code ec;
  // Only a regular file is read back: a FIFO or /dev/stdout would block or lose what is read.
  const bool regular = std::filesystem::is_regular_file(path, ec);
  bool write_header = true;
  bool needs_newline = false;
  if (regular && std::filesystem::file_size(path, ec) > 0 && !ec) {
    std::ifstream in(path, std::ios::binary);
    std::string existing;
    std::getline(in, existing);
    if (!existing.empty() && existing.back() == '\r') existing.pop_back();
    if (existing != header) {
      throw UsageError(std::string(flag) + ": '" + path + "' already holds rows under another header (" +
                       header_difference(parse_csv_line(existing), columns_) +
                       "); kbench appends only to its own CSVs: name a new file");
    }
    write_header = false;
    in.clear();
    in.seekg(-1, std::ios::end);
    needs_newline = in.get() != '\n';  // a file cut short: the next row must not join its last line
  }
  out_.open(path, std::ios::app);
  if (!out_) throw UsageError(std::string(flag) + ": cannot write '" + path + "': " + std::strerror(errno));
  if (needs_newline) out_ << '\n';
  if (write_header) out_ << header << '\n';
  out_ << std::flush;
  if (!out_) throw UsageError(std::string(flag) + ": cannot write '" + path + "'");
}

void CsvWriter::write_row(const CsvRow& row) {
  for (const auto& [key, value] : row) {
    if (std::find(columns_.begin(), columns_.end(), key) == columns_.end()) {
      throw std::logic_error("CSV row has a key that is not a column: " + key);
    }
  }
  std::vector<std::string> fields;
  fields.reserve(columns_.size());
  for (const auto& column : columns_) {
    const auto it = row.find(column);
    fields.push_back(it == row.end() ? std::string() : it->second);
  }
  out_ << csv_line(fields) << '\n' << std::flush;
  if (!out_) throw std::runtime_error("writing a row to " + path_ + " failed: " + std::strerror(errno));
}

}  // namespace kbench
