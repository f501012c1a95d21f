#include "core/flags.hpp"

namespace kbench {

const std::vector<FlagSpec>& shared_flags() {
  static const std::vector<FlagSpec> flags = {
      {"routine", FlagKind::text, std::nullopt, "Routine to run (kbench --help lists them).", {}, true, "R"},
      {"backends", FlagKind::text_list, std::nullopt, "Backends to test, space separated (default: the routine's).", {}, false, ""},
      {"num_iters", FlagKind::integer, "30", "Measured iterations.", {}, false, "n"},
      {"dry_run_iters", FlagKind::integer, "5", "Warm-up iterations, never measured.", {}, false, "d"},
      {"no_cuda_graph", FlagKind::boolean, "false", "Launch calls directly instead of replaying a CUDA graph.", {}, false, ""},
      {"use_cupti", FlagKind::boolean, "false", "Accepted for compatibility: CUPTI is kbench's default timer.", {}, false, ""},
      {"use_cuda_events", FlagKind::boolean, "false", "Time with CUDA events instead of CUPTI.", {}, false, ""},
      {"refcheck", FlagKind::boolean, "false", "Check every backend against kbench's fp32 reference.", {}, false, ""},
      {"allow_output_mismatch", FlagKind::boolean, "false", "Report refcheck mismatches without failing.", {}, false, ""},
      {"random_seed", FlagKind::integer, "42", "Seed of the random inputs.", {}, false, ""},
      {"verbose", FlagKind::count, "0", "More output; -vv prints every tensor.", {}, false, "v"},
      {"output_path", FlagKind::text, std::nullopt, "Append one CSV row per backend to this file.", {}, false, ""},
      {"testlist", FlagKind::text, std::nullopt, "Run every case listed in this file, one per line.", {}, false, ""},
      {"case_tag", FlagKind::text, std::nullopt, "A tag for this case, written to the CSV.", {}, false, ""},
      {"generate_repro_command", FlagKind::boolean, "false", "Print (and write to the CSV) a command that reproduces the case.", {}, false, ""},
      {"enable_pdl", FlagKind::boolean, "false", "Launch with programmatic dependent launch (sm_90+).", {}, false, ""},
      {"check", FlagKind::boolean, "false",
       "Check every case (flags, sweeps, sizes, memory, backend names) with no GPU and run nothing; exit 0 or 2.", {}, false, ""},
      {"gpu_memory_gib", FlagKind::real, "79.6", "With --check: the GPU memory cases must fit in (an H100 80GB's by default).", {}, false, ""},
      {"autotune", FlagKind::boolean, "false", "Accepted for compatibility and ignored: kbench's backends plan once, outside timing.", {}, false, ""},
      {"autotune_cache", FlagKind::text, std::nullopt, "Accepted for compatibility and ignored (see --autotune).", {}, false, ""},
      {"max_noise", FlagKind::real, std::nullopt,
       "Measure in batches of -n iterations until the median's noise (half its 95% confidence interval) is at most "
       "this many percent; the default measures -n iterations once.", {}, false, ""},
      {"min_time", FlagKind::real, "0.5", "With --max_noise: measure at least this many seconds of GPU time.", {}, false, ""},
      {"max_time", FlagKind::real, "15", "With --max_noise: stop after this many seconds even if the noise is higher.", {}, false, ""},
      {"json", FlagKind::text, std::nullopt,
       "Write every case (arguments, every backend's disposition and reason) and every result (statistics, clocks) to this JSON file.", {}, false, ""},
      {"json_samples", FlagKind::boolean, "false", "With --json: also write every measured sample.", {}, false, ""},
      {"gpus", FlagKind::text, std::nullopt,
       "Spread the cases over these GPUs (all, or indices such as 0,1): one child process per case, one worker per "
       "GPU, output and CSV rows in the run's order.", {}, false, ""},
      {"shard", FlagKind::text, std::nullopt,
       "I/N: run only the I-th (from 0) of N contiguous slices of the run's cases, so the CSVs of N jobs concatenate "
       "in order.", {}, false, ""},
      {"nproc", FlagKind::integer, std::nullopt,
       "Start N processes of this command on this host, one per GPU (rank r on GPU r), for the multi-GPU routines "
       "(moe_a2a_dispatch_combine); the same as mpirun -np N, without MPI. Only rank 0 prints results and writes "
       "the CSV.", {}, false, ""},
      {"isolate", FlagKind::boolean, "false",
       "Run every case in a child process of its own: a case that faults or hangs is reported as failed and the run goes on.", {}, false, ""},
      {"case_timeout", FlagKind::real, std::nullopt, "Kill a case's process after this many seconds (implies --isolate).", {}, false, ""},
      {"per_stage_timing", FlagKind::boolean, "false",
       "Also time each stage of a backend that runs in stages (the MoE layer's routing, permutation, FC1, ...) on "
       "its own: [INFO] lines and the CSV's stage_times column.", {}, false, ""},
      {"baseline", FlagKind::text, std::nullopt, "Report every other backend's speedup over this one.", {}, false, ""},
      {"baseline_csv", FlagKind::text, std::nullopt,
       "With --baseline: append the vLLM decode sweep's CSV (baseline_mean, <backend>_mean, speedup_percent, ...).", {}, false, ""},
  };
  return flags;
}

}  // namespace kbench
