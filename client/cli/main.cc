// chunkplan: the command-line client of the chunk planner.
//
//   chunkplan search --request FILE|- (--local | --server HOST:PORT)
//                    [--engine auto|cpu_sweep|cpu_plateau|cuda]
//                    [--format json|table] [--deadline 5s]
//   chunkplan layout    (the same flags; a LayoutRequest)
//   chunkplan frontier  (the same flags; a LayoutRequest)
//   chunkplan search|layout|frontier --hf-config FILE [--architecture NAME]
//                    [--dp N] [--hidden-dim H | --search-interval N]
//                    [--search-range-m M] [--min-chunk-size-m M]
//                    [--no-filter] (--local | --server ...)
//   chunkplan layout --hf-config FILE --dp 4,8,16 [...]  (a row per degree)
//   chunkplan layout|frontier ... [--objective O] [--precision P]
//                    [--emit colossalai] [--device-memory 80GiB | --gpu N]
//   chunkplan layout ... (--device-memory 24GiB | --gpu N) [--reserve 1GiB]
//                    [--margin 5%] [--host-memory 128GiB --gpus-per-node 4]
//                    (the server's verdict on the layout)
//   chunkplan plan (--hf-config FILE | --request FILE|-)
//                  (--local | --server ...) (--device-memory 80GiB | --gpu
//                  NAME) --gpus-per-node N --world-sizes 8,16 [...]
//   chunkplan describe --hf-config FILE [--architecture NAME]
//                      (--local | --server HOST:PORT) [--format json|table]
//   chunkplan health --server HOST:PORT [--service NAME] [--deadline 5s]
//   chunkplan gpus      (the --gpu presets: docs/gpu-presets.md)
//   chunkplan version | --version
//
// With --server, --tls (the system's CAs) or --tls_ca (and, for mutual TLS,
// --tls_cert and --tls_key) connect over TLS instead of plaintext.
//
// Exit codes: 0 success (plan: an option fits; layout with a cluster: it
// fits), 1 a failed search, layout, frontier, plan or health check, 2 a
// usage error, 3 the server's verdict says it does not fit (plan: no
// option fits; layout: its verdict; --emit then prints nothing), with why
// on stderr. Every failure prints one line "CODE: message" on stderr, CODE
// being the canonical status name.

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chunkplan/planner/planner.h"
#include "client/cli/byte_size.h"
#include "client/cli/cluster_flags.h"
#include "client/cli/cluster_plan_command.h"
#include "client/cli/flag_check.h"
#include "client/cli/flag_scope.h"
#include "client/cli/gpu_presets.h"
#include "client/cli/health_command.h"
#include "client/cli/model_request.h"
#include "client/cli/plan_command.h"
#include "client/cli/remote_call.h"
#include "client/cli/request_flags.h"
#include "common/status_macros.h"

ABSL_FLAG(
    std::string, request, "",
    "search, layout, frontier: the ChunkSearchRequest or LayoutRequest as "
    "protobuf JSON; '-' reads stdin");
ABSL_FLAG(std::string, hf_config, "",
          "describe, and search, layout, frontier in place of --request: a "
          "Hugging Face config.json; '-' reads stdin");
ABSL_FLAG(std::string, params, "",
          "describe, search, layout, frontier, plan in place of --request "
          "or --hf-config: any model by its parameter list, a JSON list of "
          "{\"name\", \"numel\"} or [name, shape] in named_parameters() "
          "order (Python: chunkplan.params.write_params(module, FILE)); "
          "--freeze and --train match its names on the server; '-' reads "
          "stdin");
ABSL_FLAG(std::string, shape_from, "",
          "layout, plan with --params and a workload: a served family's "
          "config.json whose shape the activation estimate uses");
ABSL_FLAG(std::string, architecture, "",
          "with --hf-config: the class to describe, e.g. LlamaForCausalLM "
          "(default: the config's architectures[0])");
ABSL_FLAG(std::string, dp, "",
          "with --hf-config: the data-parallel degree of every parameter "
          "(default 1); layout takes several, e.g. 4,8,16: a row each");
ABSL_FLAG(uint64_t, hidden_dim, 0,
          "with --hf-config: GeminiPlugin's hidden_dim, the search interval "
          "(default: none, GeminiPlugin's 1024)");
ABSL_FLAG(std::string, search_range_m, "",
          "with --hf-config: the sweep's width in 2**20 elements (default "
          "32, GeminiPlugin's)");
ABSL_FLAG(std::string, search_interval, "",
          "with --hf-config: the step between candidates, in place of "
          "--hidden-dim (default: --hidden-dim, else GeminiPlugin's 1024)");
ABSL_FLAG(std::string, min_chunk_size_m, "",
          "with --hf-config: groups below this many 2**20 elements stay "
          "gathered (default 32)");
ABSL_FLAG(bool, no_filter, false,
          "with --hf-config: keep extra-large parameters in the sweep");
ABSL_FLAG(uint32_t, lora_rank, 0,
          "with --hf-config: LoRA's r; adds PEFT's adapters to the modules "
          "of --lora-targets, the base frozen (docs/lora.md)");
ABSL_FLAG(std::string, lora_targets, "",
          "with --lora-rank: the modules to adapt, e.g. q_proj,v_proj "
          "(PEFT's target_modules: a name or its last parts)");
ABSL_FLAG(std::string, lora_dropout, "",
          "with --lora-rank: lora_dropout (default 0); above 0 its tensors "
          "count in the activation estimate");
ABSL_FLAG(std::string, freeze, "",
          "with --hf-config or --params: parameters whose names match this "
          "RE2 pattern are frozen (found anywhere in the name)");
ABSL_FLAG(std::string, train, "",
          "with --hf-config or --params: only parameters whose names match "
          "this RE2 pattern are trained (with --lora-rank, or a list with "
          "requires_grad false: these besides the trainable ones)");
ABSL_FLAG(bool, local, false,
          "search, layout, frontier: run the planner in this process");
ABSL_FLAG(
    std::string, server, "",
    "search, layout, frontier, health: the server, host:port or unix:/path");
ABSL_FLAG(
    std::string, engine, "",
    "search, layout, frontier: auto|cpu_sweep|cpu_plateau|cuda, replaces the "
    "request's");
ABSL_FLAG(std::string, format, "",
          "json or table (default: json; plan: table)");
ABSL_FLAG(std::string, objective, "",
          "layout, frontier: seed_waste|layout_padding|peak_rank_bytes, what "
          "the chosen candidate minimises; replaces the request's");
ABSL_FLAG(std::string, placement, "",
          "layout, frontier: static|auto, replaces the request's "
          "gemini.placement");
ABSL_FLAG(std::string, offload_optim_frac, "",
          "layout, frontier: replaces the request's gemini.offload_optim_frac");
ABSL_FLAG(std::string, offload_param_frac, "",
          "layout, frontier: replaces the request's gemini.offload_param_frac");
ABSL_FLAG(std::string, shard_param_frac, "",
          "layout, frontier: replaces the request's gemini.shard_param_frac");
ABSL_FLAG(std::string, precision, "",
          "layout, frontier, plan: fp16|bf16, replaces the request's");
ABSL_FLAG(
    bool, no_master_weights, false,
    "layout, frontier, plan: no fp32 master copies (master_weights=False)");
ABSL_FLAG(bool, gradient_accumulation, false,
          "layout, frontier, plan: enable_gradient_accumulation=True");
ABSL_FLAG(bool, no_pin_memory, false,
          "layout, frontier, plan: no pinned host copies of the shards");
ABSL_FLAG(std::string, optimizer, "",
          "layout, frontier, plan: adam|none, whose states count");
ABSL_FLAG(bool, offload_sweep, false,
          "layout: one row per offload_optim_frac 0, 0.05, ..., 1 on the "
          "configuration laid out");
ABSL_FLAG(uint32_t, gpus_per_node, 0,
          "plan, layout: GPUs (ranks) per node, for a node's host bytes");
ABSL_FLAG(std::string, device_memory, "",
          "plan, layout: memory of one GPU, e.g. 80GiB (KiB..TiB, KB..TB), "
          "the verdict's; layout (auto placement), frontier: also "
          "gemini.device_memory_bytes (auto placement's warm-up)");
ABSL_FLAG(std::string, gpu, "",
          "plan, layout, frontier: the GPU by name (chunkplan gpus), in place "
          "of --device-memory");
ABSL_FLAG(std::string, host_memory, "",
          "plan, layout: host memory of one node, e.g. 1TiB (default: not "
          "checked)");
ABSL_FLAG(std::string, world_sizes, "",
          "plan: the data-parallel sizes the job may use, e.g. 8,16,32");
ABSL_FLAG(bool, whole_nodes, false,
          "plan, with --max-nodes: world sizes of whole nodes, "
          "--gpus-per-node x 1 to --max-nodes (in place of --world-sizes); "
          "the first option that fits is then the fewest nodes");
ABSL_FLAG(uint32_t, max_nodes, 0,
          "plan, with --whole-nodes: the most nodes the job may use (1..64)");
ABSL_FLAG(std::string, reserve, "",
          "plan, layout: per GPU, kept free for the CUDA context and "
          "workspace, e.g. 2GiB");
ABSL_FLAG(std::string, margin, "",
          "plan, layout: the share of device memory a configuration must "
          "leave free, e.g. 0.05 or 5% (default: the server's 5%; 0: none)");
ABSL_FLAG(uint32_t, micro_batch, 0,
          "plan, layout, with --sequence-length: estimate activations for "
          "this micro-batch (decoder-only models by --hf-config)");
ABSL_FLAG(uint32_t, sequence_length, 0,
          "plan, layout, with --micro-batch: the sequence length");
ABSL_FLAG(bool, activation_checkpointing, false,
          "plan, layout, with --micro-batch: full activation checkpointing");
ABSL_FLAG(bool, flash_attention, false,
          "plan, layout, with --micro-batch: flash_attention_2 (as "
          "--attention flash_attention_2)");
ABSL_FLAG(std::string, attention, "",
          "plan, layout, with --micro-batch: the trainer's "
          "attn_implementation, eager, sdpa or flash_attention_2 (unset: "
          "transformers' default, sdpa)");
ABSL_FLAG(uint32_t, max_options, 0, "plan: options to list (default 10)");
ABSL_FLAG(std::string, tp_size, "",
          "GeminiPlugin's tp_size (describe: tp rank 0's shards); plan: a "
          "list to try (1,2,4) or 'search' (1, 2, 4, 8 within a node)");
ABSL_FLAG(std::string, extra_dp_size, "",
          "GeminiPlugin's extra_dp_size; plan: a list to try");
ABSL_FLAG(bool, sequence_parallelism, false,
          "GeminiPlugin's enable_sequence_parallelism (with --tp-size > 1; "
          "mode split_gather)");
ABSL_FLAG(std::string, emit, "",
          "plan: 'colossalai' prints the first option's GeminiPlugin(...) "
          "line; layout, frontier: that of the configuration laid out (one "
          "per degree; frontier: the objective's best); nothing when the "
          "server's verdict says it does not fit (why on stderr, exit 3)");
ABSL_FLAG(absl::Duration, deadline, absl::InfiniteDuration(),
          "search, layout, frontier, health with --server: deadline of the "
          "call, e.g. 5s");
ABSL_FLAG(std::string, service, "",
          "health: the service to ask about; empty: the whole server");
ABSL_FLAG(bool, tls, false,
          "with --server: connect over TLS, verifying the server with the "
          "system's CAs");
ABSL_FLAG(std::string, tls_ca, "",
          "with --server: connect over TLS, verifying the server with this "
          "PEM CA file");
ABSL_FLAG(std::string, tls_cert, "",
          "with --server: connect over TLS presenting this PEM client "
          "certificate (mutual TLS); needs --tls_key");
ABSL_FLAG(std::string, tls_key, "",
          "with --server: the PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "with TLS: the name the server's certificate must carry, where it "
          "is not the host of --server");

#ifndef CHUNKPLAN_VERSION
#error "CHUNKPLAN_VERSION must be defined by the build (PROJECT_VERSION)"
#endif

namespace chunkplan::cli {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDoesNotFit = 3;

constexpr char kUsage[] = R"(plans ColossalAI Gemini chunk configurations.

Commands:
  chunkplan search --request FILE|- (--local | --server HOST:PORT)
                   [--engine auto|cpu_sweep|cpu_plateau|cuda]
                   [--format json|table] [--deadline 5s]
      answers a ChunkSearchRequest: ColossalAI's search, exactly
  chunkplan layout --request FILE|- (--local | --server HOST:PORT)
                   [--engine ...] [--format json|table] [--deadline 5s]
                   [--objective seed_waste|layout_padding|peak_rank_bytes]
                   [--placement static|auto] [--offload_optim_frac F]
                   [--offload_param_frac F] [--shard_param_frac F]
                   [--precision fp16|bf16] [--no-master-weights]
                   [--gradient-accumulation] [--no-pin-memory]
                   [--optimizer adam|none] [--device-memory 80GiB | --gpu N]
                   [--micro-batch N --sequence-length N ...]
                   [--reserve 1GiB] [--margin 5%]
                   [--host-memory 128GiB --gpus-per-node 4]
                   [--offload-sweep] [--emit colossalai]
      answers a LayoutRequest: the chunks Gemini allocates and every
      rank's bytes; with a device, the server's verdict on it (exit 3
      when it does not fit)
  chunkplan frontier (as layout, without the verdict's flags, the workload
                   and --offload-sweep)
      answers a LayoutRequest with every candidate that is a new best by
      its objective (the chunk size against padding or memory)
  chunkplan search|layout|frontier --hf-config FILE [--architecture NAME]
                   [--dp N] [--hidden-dim H | --search-interval N]
                   [--search-range-m M] [--min-chunk-size-m M] [--no-filter]
                   (--local | --server HOST:PORT) [--format json|table]
      the same questions for a model named by its Hugging Face config.json;
      layout takes several degrees (--dp 4,8,16): one row each
  chunkplan search|layout|frontier|plan|describe --params FILE [--dp N]
                   [--freeze REGEX] [--train REGEX] [...] [--shape-from CONFIG]
      the same for any model by its parameter list (named_parameters()
      order: chunkplan.params.write_params writes it from an nn.Module);
      the server matches --freeze/--train on its names; the activation
      estimate takes its shape from --shape-from
  chunkplan describe --hf-config FILE [--architecture NAME]
                   [--tp-size N [--sequence-parallelism]]
                   (--local | --server HOST:PORT) [--format json|table]
      the model's parameters, in model.parameters() order (with --tp-size,
      tp rank 0's shards under the family's ShardFormer policy)
  with --hf-config (describe, search, layout, frontier, plan):
                   [--lora-rank R --lora-targets q_proj,v_proj
                    [--lora-dropout P]] [--freeze REGEX] [--train REGEX]
      PEFT's LoRA adapters added (base frozen, adapters trained) and which
      parameters train, matched by the server (docs/lora.md); --freeze and
      --train apply to --params too
  chunkplan plan (--hf-config FILE [--architecture NAME] [--hidden-dim H]
                  | --request FILE|-) (--local | --server HOST:PORT)
                 (--device-memory 80GiB | --gpu NAME) [--host-memory 1TiB]
                 --gpus-per-node 8 --world-sizes 8,16,32 [--reserve 2GiB]
                 [--margin 5%]
                 [--micro-batch N --sequence-length N
                  [--activation-checkpointing] [--flash-attention]]
                 [--precision ...] [--no-master-weights] [...]
                 [--tp-size N|1,2,4|search] [--extra-dp-size N|1,2]
                 [--sequence-parallelism]
                 [--max-options N] [--format table|json]
                 [--emit colossalai] [--deadline 5s]
      the Gemini configurations that fit the cluster, ranked: per world
      size, chunk size and placement (offload fractions), each one's
      device and host bytes, the server's verdict (fits: the need leaves
      the margin free), and GeminiPlugin's arguments; exit 3 when no
      option fits (a PlanRequest file takes the flags given over its own
      fields)
  chunkplan health --server HOST:PORT [--service NAME] [--deadline 5s]
  chunkplan gpus
      the cards --gpu knows, with their memory as nvidia-smi reports it
  chunkplan version

With --server: --tls (the system's CAs) or --tls_ca FILE connects over
TLS; --tls_cert FILE and --tls_key FILE add a client certificate (mutual
TLS); --tls_server_name NAME checks another name than the host's.
The request and the response are chunkplan.v1 messages in protobuf's JSON
mapping (plan prints a table unless --format json). Flags take dashes or
underscores (--hf-config or --hf_config). --hf-config names the model by
its Hugging Face config.json instead: the search GeminiPlugin runs for it
(search range 32 Mi, interval --hidden-dim or else GeminiPlugin's 1024,
minimum chunk 32 Mi, filter on, every parameter at degree --dp);
which interval was used, and why, is said on stderr (json) or in the table.
describe lists the model's parameters. Memory sizes take KiB..TiB or
KB..TB. Every figure printed is the server's (or, with --local, the same
planner's). Python users: the chunkplan package is a library over the same
server (docs/python-client.md); its `chunkplan` console script runs this
binary. Exit codes: 0 success (it fits), 1 failure, 2 usage error, 3 the
server's verdict: it does not fit.

Flags:)";

// --help and --helpshort list this file's flags (abseil's default looks for
// a file named after the binary, and finds none).
bool IsCliFlagFile(absl::string_view file) {
  return absl::EndsWith(file, "client/cli/main.cc");
}

// `chunkplan version` and --version: "chunkplan <version>" (the CMake
// project version) and the engines this binary can run here, e.g.
// "engines: CPU_SWEEP CPU_PLATEAU".
std::string VersionText() {
  return absl::StrCat("chunkplan ", CHUNKPLAN_VERSION,
                      "\nengines: ", planner::DescribeBuiltInEngines(), "\n");
}

// Prints `status` as "CODE: message" on stderr and returns `exit_code`.
int Fail(const absl::Status& status, int exit_code) {
  std::cerr << absl::StatusCodeToString(status.code()) << ": "
            << status.message() << std::endl;
  return exit_code;
}

int UsageError(absl::string_view message) {
  return Fail(absl::InvalidArgumentError(message), kExitUsage);
}

// The --server, --deadline and --tls* of a remote command, or a usage
// error (a TLS file that cannot be read included).
absl::StatusOr<RemoteTarget> RemoteFromFlags(absl::string_view command) {
  RemoteTarget target;
  target.address = absl::GetFlag(FLAGS_server);
  target.deadline = absl::GetFlag(FLAGS_deadline);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      target.tls,
      ReadTlsFiles(absl::GetFlag(FLAGS_tls), absl::GetFlag(FLAGS_tls_ca),
                   absl::GetFlag(FLAGS_tls_cert),
                   absl::GetFlag(FLAGS_tls_key)));
  target.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  if (target.address.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(command, " needs --server HOST:PORT"));
  }
  if (target.deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--deadline must be positive");
  }
  if (!target.tls.has_value() && !target.tls_server_name.empty()) {
    return absl::InvalidArgumentError(
        "--tls_server_name needs TLS (--tls or --tls_ca)");
  }
  return target;
}

// The number `text` of --name, or nullopt when it is empty; a usage error
// when it is no number.
absl::StatusOr<std::optional<double>> NumberFlag(
    const absl::Flag<std::string>& flag, absl::string_view name) {
  const std::string text = absl::GetFlag(flag);
  if (text.empty()) return std::nullopt;
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be a number, not '", text, "'"));
  }
  return value;
}

// --name's memory size, or nullopt when it is not given.
absl::StatusOr<std::optional<uint64_t>> ByteSizeFlag(
    const absl::Flag<std::string>& flag, absl::string_view name) {
  const std::string text = absl::GetFlag(flag);
  if (text.empty()) return std::nullopt;
  return ParseByteSize(name, text);
}

// --device-memory or --gpu (one of them), or nullopt with neither.
absl::StatusOr<std::optional<uint64_t>> DeviceMemoryFromFlags() {
  const std::string gpu = absl::GetFlag(FLAGS_gpu);
  if (gpu.empty()) return ByteSizeFlag(FLAGS_device_memory, "--device-memory");
  if (!absl::GetFlag(FLAGS_device_memory).empty()) {
    return absl::InvalidArgumentError("give one of --gpu and --device-memory");
  }
  return GpuPresetBytes(gpu);
}

// The GeminiPlugin flags (the placement's only where `placement`).
absl::StatusOr<GeminiFlags> GeminiFromFlags(bool placement) {
  GeminiFlags g;
  if (const std::string p = absl::GetFlag(FLAGS_precision); !p.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(g.precision, ParsePrecision(p));
  }
  if (const std::string o = absl::GetFlag(FLAGS_optimizer); !o.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(g.optimizer, ParseOptimizer(o));
  }
  g.no_master_weights = absl::GetFlag(FLAGS_no_master_weights);
  g.gradient_accumulation = absl::GetFlag(FLAGS_gradient_accumulation);
  g.no_pin_memory = absl::GetFlag(FLAGS_no_pin_memory);
  g.sequence_parallelism = absl::GetFlag(FLAGS_sequence_parallelism);
  if (const std::string t = absl::GetFlag(FLAGS_tp_size); t == "search") {
    g.search_tp = true;
  } else if (!t.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(g.tp_sizes, ParseDegreeList("--tp-size", t));
  }
  if (const std::string e = absl::GetFlag(FLAGS_extra_dp_size); !e.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(g.extra_dp_sizes,
                               ParseDegreeList("--extra-dp-size", e));
  }
  // Plan alone tries several meshes.
  if (placement &&
      (g.search_tp || g.tp_sizes.size() > 1 || g.extra_dp_sizes.size() > 1)) {
    return absl::InvalidArgumentError(
        "--tp-size and --extra-dp-size take one degree here (plan tries "
        "lists and --tp-size search)");
  }
  if (!placement) return g;
  if (const std::string p = absl::GetFlag(FLAGS_placement); !p.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(g.placement, ParsePlacement(p));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      g.offload_optim_frac,
      NumberFlag(FLAGS_offload_optim_frac, "offload_optim_frac"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      g.offload_param_frac,
      NumberFlag(FLAGS_offload_param_frac, "offload_param_frac"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      g.shard_param_frac,
      NumberFlag(FLAGS_shard_param_frac, "shard_param_frac"));
  CHUNKPLAN_ASSIGN_OR_RETURN(g.device_memory_bytes, DeviceMemoryFromFlags());
  return g;
}

// The workload of --micro-batch and --sequence-length (both or neither)
// and the two switches, or nullopt without one.
absl::StatusOr<std::optional<v1::Workload>> WorkloadFromFlags() {
  const uint32_t batch = absl::GetFlag(FLAGS_micro_batch);
  const uint32_t length = absl::GetFlag(FLAGS_sequence_length);
  if ((batch == 0) != (length == 0)) {
    return absl::InvalidArgumentError(
        "--micro-batch and --sequence-length go together");
  }
  const std::string attention = absl::GetFlag(FLAGS_attention);
  if (batch == 0 &&
      (absl::GetFlag(FLAGS_activation_checkpointing) ||
       absl::GetFlag(FLAGS_flash_attention) || !attention.empty())) {
    return absl::InvalidArgumentError(
        "--activation-checkpointing, --flash-attention and --attention need "
        "--micro-batch and --sequence-length");
  }
  v1::Attention kind = v1::ATTENTION_DEFAULT;
  if (!attention.empty() &&
      (attention == "default" ||
       !v1::Attention_Parse("ATTENTION_" + absl::AsciiStrToUpper(attention),
                            &kind))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--attention: \"", attention,
                     "\" is not one of eager, sdpa, flash_attention_2"));
  }
  if (batch == 0) return std::nullopt;
  v1::Workload w;
  w.set_micro_batch(batch);
  w.set_sequence_length(length);
  w.set_activation_checkpointing(absl::GetFlag(FLAGS_activation_checkpointing));
  w.set_flash_attention(absl::GetFlag(FLAGS_flash_attention));
  w.set_attention(kind);
  return w;
}

// --shape-from into `workload` (the estimate's shape for a parameter
// list); for a parameter list with a workload and no --shape-from, the
// workload dropped and `model` marked (IntervalNote says why). Usage errors:
// --shape-from without --params or without a workload; its file's errors.
absl::Status ShapeFromFlags(std::optional<ModelFlags>& model,
                            std::optional<v1::Workload>& workload) {
  const std::string path = absl::GetFlag(FLAGS_shape_from);
  const bool params = model.has_value() && !model->params_path.empty();
  if (!path.empty()) {
    if (!params || !workload.has_value()) {
      return absl::InvalidArgumentError(
          "--shape-from applies to --params with --micro-batch and "
          "--sequence-length");
    }
    ModelFlags shape;
    shape.config_path = path;
    CHUNKPLAN_ASSIGN_OR_RETURN(*workload->mutable_shape_from(),
                               ReadModelConfig(shape));
    return absl::OkStatus();
  }
  if (params && workload.has_value()) {
    workload.reset();
    model->workload_without_shape = true;
  }
  return absl::OkStatus();
}

// --emit: false when not given, true for colossalai; a usage error for
// another format.
absl::StatusOr<bool> EmitFromFlags() {
  const std::string emit = absl::GetFlag(FLAGS_emit);
  if (emit.empty()) return false;
  if (emit != "colossalai") {
    return absl::InvalidArgumentError(
        absl::StrCat("--emit takes colossalai, not '", emit, "'"));
  }
  if (!absl::GetFlag(FLAGS_format).empty()) {
    return absl::InvalidArgumentError(
        "--format and --emit are two outputs: give one");
  }
  return true;
}

// The search settings of --hf-config into `model`.
absl::Status SearchFromFlags(ModelFlags& model) {
  CHUNKPLAN_ASSIGN_OR_RETURN(
      model.search_range_m, NumberFlag(FLAGS_search_range_m, "search-range-m"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      model.min_chunk_size_m,
      NumberFlag(FLAGS_min_chunk_size_m, "min-chunk-size-m"));
  model.no_filter = absl::GetFlag(FLAGS_no_filter);
  if (const std::string text = absl::GetFlag(FLAGS_search_interval);
      !text.empty()) {
    uint64_t interval = 0;
    if (!absl::SimpleAtoi(text, &interval)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--search-interval must be a whole number, not '", text, "'"));
    }
    if (model.hidden_dim.has_value()) {
      return absl::InvalidArgumentError(
          "give one of --hidden-dim and --search-interval");
    }
    model.search_interval = interval;
  }
  return absl::OkStatus();
}

// What is trained: --lora-rank, --lora-targets, --lora-dropout, --freeze
// and --train into `model` (the server checks them).
absl::Status TrainingFromFlags(ModelFlags& model) {
  model.lora_rank = absl::GetFlag(FLAGS_lora_rank);
  if (const std::string targets = absl::GetFlag(FLAGS_lora_targets);
      !targets.empty()) {
    std::vector<std::string> list = absl::StrSplit(targets, ',');
    model.lora_targets = std::move(list);
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(model.lora_dropout,
                             NumberFlag(FLAGS_lora_dropout, "lora-dropout"));
  model.freeze = absl::GetFlag(FLAGS_freeze);
  model.train = absl::GetFlag(FLAGS_train);
  return absl::OkStatus();
}

// The model flags and --dp's degrees (one unless `several`), or nullopt
// without --hf-config (then the model's flags must be unset); a usage error
// otherwise.
absl::StatusOr<std::optional<ModelFlags>> ModelFromFlags(
    bool several = false, std::vector<uint32_t>* degrees = nullptr) {
  ModelFlags model;
  model.config_path = absl::GetFlag(FLAGS_hf_config);
  model.params_path = absl::GetFlag(FLAGS_params);
  if (!model.config_path.empty() && !model.params_path.empty()) {
    return absl::InvalidArgumentError("give one of --hf-config and --params");
  }
  model.architecture = absl::GetFlag(FLAGS_architecture);
  if (!model.params_path.empty() && !model.architecture.empty()) {
    return absl::InvalidArgumentError("--architecture applies to --hf-config");
  }
  if (const uint64_t hidden = absl::GetFlag(FLAGS_hidden_dim); hidden != 0) {
    model.hidden_dim = hidden;
  }
  CHUNKPLAN_RETURN_IF_ERROR(SearchFromFlags(model));
  CHUNKPLAN_RETURN_IF_ERROR(TrainingFromFlags(model));
  const std::string dp = absl::GetFlag(FLAGS_dp);
  if (model.config_path.empty() && model.params_path.empty() &&
      (model.lora_rank != 0 || !model.lora_targets.empty() ||
       model.lora_dropout.has_value() || !model.freeze.empty() ||
       !model.train.empty())) {
    // The server matches them where it describes the model
    // (server/models/trainable.h): a config's or a parameter list's.
    return absl::InvalidArgumentError(
        "--lora-rank, --lora-targets, --lora-dropout, --freeze and --train "
        "apply to --hf-config and --params");
  }
  if (model.config_path.empty() && model.params_path.empty()) {
    if (!model.architecture.empty() || !dp.empty() ||
        model.hidden_dim.has_value() || model.search_range_m.has_value() ||
        model.search_interval.has_value() ||
        model.min_chunk_size_m.has_value() || model.no_filter) {
      return absl::InvalidArgumentError(
          "--architecture, --dp, --hidden-dim and the search settings "
          "(--search-range-m, --search-interval, --min-chunk-size-m, "
          "--no-filter) apply to --hf-config and --params only");
    }
    return std::nullopt;
  }
  std::vector<uint32_t> list = {1};
  if (!dp.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(list, ParseDegreeList("--dp", dp));
  }
  if (list.size() > 1 && !several) {
    return absl::InvalidArgumentError(
        "--dp takes one degree here (layout takes several)");
  }
  model.dp = list[0];
  if (degrees != nullptr) *degrees = std::move(list);
  return model;
}

// The --local / --server choice of `command` and --format into `options`,
// or a usage error.
absl::Status TargetFromFlags(absl::string_view command, PlanOptions& options) {
  const bool local = absl::GetFlag(FLAGS_local);
  if (local == !absl::GetFlag(FLAGS_server).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(command, " needs exactly one of --local and --server"));
  }
  if (local) {
    if (absl::GetFlag(FLAGS_deadline) != absl::InfiniteDuration()) {
      return absl::InvalidArgumentError("--deadline applies to --server only");
    }
    if (absl::GetFlag(FLAGS_tls) || !absl::GetFlag(FLAGS_tls_ca).empty() ||
        !absl::GetFlag(FLAGS_tls_cert).empty() ||
        !absl::GetFlag(FLAGS_tls_key).empty() ||
        !absl::GetFlag(FLAGS_tls_server_name).empty()) {
      return absl::InvalidArgumentError("--tls* apply to --server only");
    }
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(options.server, RemoteFromFlags(command));
  }
  const std::string format_flag = absl::GetFlag(FLAGS_format);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      options.format,
      ParseOutputFormat(format_flag.empty() ? "json" : format_flag));
  return absl::OkStatus();
}

// The cluster flags of plan and layout (--world-sizes: plan's only, by
// flag_scope), or a usage error.
absl::StatusOr<ClusterFlags> ClusterFromFlags() {
  ClusterFlags f;
  CHUNKPLAN_ASSIGN_OR_RETURN(f.device_memory_bytes, DeviceMemoryFromFlags());
  CHUNKPLAN_ASSIGN_OR_RETURN(f.host_memory_bytes,
                             ByteSizeFlag(FLAGS_host_memory, "--host-memory"));
  CHUNKPLAN_ASSIGN_OR_RETURN(f.reserve_bytes,
                             ByteSizeFlag(FLAGS_reserve, "--reserve"));
  if (const std::string w = absl::GetFlag(FLAGS_world_sizes); !w.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(f.world_sizes,
                               ParseDegreeList("--world-sizes", w));
  }
  if (const uint32_t n = absl::GetFlag(FLAGS_gpus_per_node); n != 0) {
    f.gpus_per_node = n;
  }
  const bool whole_nodes = absl::GetFlag(FLAGS_whole_nodes);
  const uint32_t max_nodes = absl::GetFlag(FLAGS_max_nodes);
  if (whole_nodes != (max_nodes != 0)) {
    return absl::InvalidArgumentError(
        "--whole-nodes and --max-nodes N go together");
  }
  if (whole_nodes) {
    if (f.world_sizes) {
      return absl::InvalidArgumentError(
          "--whole-nodes takes the place of --world-sizes: give one");
    }
    f.max_nodes = max_nodes;
  }
  if (const std::string m = absl::GetFlag(FLAGS_margin); !m.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(f.margin, ParseMargin(m));
  }
  return f;
}

// The options of `command` (search, layout or frontier) from the flags, or
// a usage error.
absl::StatusOr<PlanOptions> PlanOptionsFromFlags(absl::string_view command) {
  PlanOptions options;
  options.request_path = absl::GetFlag(FLAGS_request);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      options.model, ModelFromFlags(command == "layout", &options.degrees));
  if (options.request_path.empty() == !options.model.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(command,
                     " needs exactly one of --request FILE (or -), "
                     "--hf-config FILE and --params FILE"));
  }
  CHUNKPLAN_RETURN_IF_ERROR(TargetFromFlags(command, options));
  if (const std::string engine = absl::GetFlag(FLAGS_engine); !engine.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(options.engine, ParseEngine(engine));
  }
  if (command == "search") return options;
  CHUNKPLAN_ASSIGN_OR_RETURN(options.gemini, GeminiFromFlags(true));
  if (const std::string o = absl::GetFlag(FLAGS_objective); !o.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(options.objective, ParseObjective(o));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(options.workload, WorkloadFromFlags());
  CHUNKPLAN_RETURN_IF_ERROR(ShapeFromFlags(options.model, options.workload));
  CHUNKPLAN_ASSIGN_OR_RETURN(options.emit_colossalai, EmitFromFlags());
  if (command == "layout") {
    // The device is the verdict's (and auto placement's: LayoutRequestOf).
    CHUNKPLAN_ASSIGN_OR_RETURN(options.cluster, ClusterFromFlags());
    options.gemini.device_memory_bytes.reset();
    // A request file may hold the device; a model has none of its own.
    if (options.model.has_value() && options.cluster.Any() &&
        !options.cluster.device_memory_bytes.has_value()) {
      return absl::InvalidArgumentError(
          "layout judges against a device: --host-memory, --reserve, "
          "--margin and --gpus-per-node need --device-memory or --gpu");
    }
  }
  options.offload_sweep = absl::GetFlag(FLAGS_offload_sweep);
  if (options.offload_sweep &&
      (options.emit_colossalai || (!absl::GetFlag(FLAGS_format).empty() &&
                                   options.format == OutputFormat::kJson))) {
    return absl::InvalidArgumentError(
        "--offload-sweep prints a table: no --format json or --emit");
  }
  if (options.offload_sweep) options.format = OutputFormat::kTable;
  return options;
}

// Prints `output` (the text on stdout; why it does not fit on stderr) and
// returns the exit status: 0, or kExitDoesNotFit.
int Finish(const CommandOutput& output) {
  std::cerr << output.warnings << std::flush;
  std::cout << output.text << std::flush;
  if (!output.does_not_fit.has_value()) return 0;
  std::cerr << *output.does_not_fit << std::endl;
  return kExitDoesNotFit;
}

// `command` (search, layout or frontier) run by `run` with the flags'
// options.
int Plan(Command bit, absl::string_view command,
         absl::StatusOr<CommandOutput> (*run)(const PlanOptions&)) {
  if (absl::Status s = CheckFlagsApply(bit); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  const absl::StatusOr<PlanOptions> options = PlanOptionsFromFlags(command);
  if (!options.ok()) return Fail(options.status(), kExitUsage);
  const absl::StatusOr<CommandOutput> output = run(*options);
  if (!output.ok()) return Fail(output.status(), kExitFailed);
  // JSON keeps stdout one message per line; the table says it itself.
  if (options->model.has_value() && options->format == OutputFormat::kJson) {
    std::cerr << IntervalNote(*options->model) << std::flush;
  }
  return Finish(*output);
}

int Describe() {
  if (absl::Status s = CheckFlagsApply(kDescribe); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  absl::StatusOr<std::optional<ModelFlags>> model = ModelFromFlags();
  if (!model.ok()) return Fail(model.status(), kExitUsage);
  if (!model->has_value()) {
    return UsageError("describe needs --hf-config FILE or --params FILE");
  }
  PlanOptions options;
  if (absl::Status s = TargetFromFlags("describe", options); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  if (const std::string t = absl::GetFlag(FLAGS_tp_size); !t.empty()) {
    uint32_t tp = 0;
    if (!absl::SimpleAtoi(t, &tp) || tp == 0) {
      return UsageError("describe: --tp-size takes one degree >= 1");
    }
    (*model)->tp_size = tp;
  }
  (*model)->sequence_parallelism = absl::GetFlag(FLAGS_sequence_parallelism);
  const absl::StatusOr<CommandOutput> output = RunDescribe(
      **model, options.server, options.format == OutputFormat::kTable);
  if (!output.ok()) return Fail(output.status(), kExitFailed);
  return Finish(*output);
}

// `chunkplan plan`'s options from the flags, or a usage error.
absl::StatusOr<ClusterPlanOptions> ClusterPlanFromFlags() {
  CHUNKPLAN_RETURN_IF_ERROR(CheckFlagsApply(kPlan));
  ClusterPlanOptions options;
  options.request_path = absl::GetFlag(FLAGS_request);
  CHUNKPLAN_ASSIGN_OR_RETURN(options.model, ModelFromFlags());
  if (options.request_path.empty() == !options.model.has_value()) {
    return absl::InvalidArgumentError(
        "plan needs exactly one of --request FILE (or -), --hf-config "
        "FILE and --params FILE");
  }
  PlanOptions target;
  CHUNKPLAN_RETURN_IF_ERROR(TargetFromFlags("plan", target));
  options.server = std::move(target.server);
  options.format = absl::GetFlag(FLAGS_format).empty() ? OutputFormat::kTable
                                                       : target.format;
  if (const std::string engine = absl::GetFlag(FLAGS_engine); !engine.empty()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(options.engine, ParseEngine(engine));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(options.cluster, ClusterFromFlags());
  if (const uint32_t n = absl::GetFlag(FLAGS_max_options); n != 0) {
    options.max_options = n;
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(options.workload, WorkloadFromFlags());
  CHUNKPLAN_RETURN_IF_ERROR(ShapeFromFlags(options.model, options.workload));
  CHUNKPLAN_ASSIGN_OR_RETURN(options.gemini, GeminiFromFlags(false));
  CHUNKPLAN_ASSIGN_OR_RETURN(options.emit_colossalai, EmitFromFlags());
  return options;
}

int ClusterPlan() {
  const absl::StatusOr<ClusterPlanOptions> options = ClusterPlanFromFlags();
  if (!options.ok()) return Fail(options.status(), kExitUsage);
  const absl::StatusOr<CommandOutput> output = RunClusterPlan(*options);
  if (!output.ok()) return Fail(output.status(), kExitFailed);
  if (options->model.has_value() &&
      (options->format == OutputFormat::kJson || options->emit_colossalai)) {
    std::cerr << IntervalNote(*options->model) << std::flush;
  }
  return Finish(*output);
}

int Health() {
  if (absl::Status s = CheckFlagsApply(kHealth); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  const absl::StatusOr<RemoteTarget> target = RemoteFromFlags("health");
  if (!target.ok()) return Fail(target.status(), kExitUsage);
  const std::string service = absl::GetFlag(FLAGS_service);
  const absl::StatusOr<ServingStatus> status = CheckHealth(*target, service);
  if (!status.ok()) return Fail(status.status(), kExitFailed);
  std::cout << ServingStatusName(*status) << std::endl;
  const absl::Status serving = RequireServing(*target, service, *status);
  return serving.ok() ? 0 : Fail(serving, kExitFailed);
}

int Run(int argc, char* argv[]) {
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.version_string = VersionText;  // for --version
  usage_config.contains_help_flags = IsCliFlagFile;
  usage_config.contains_helpshort_flags = IsCliFlagFile;
  absl::SetFlagsUsageConfig(usage_config);

  absl::StatusOr<std::vector<std::string>> normalized =
      NormalizeFlags(argc, argv);
  if (!normalized.ok()) return Fail(normalized.status(), kExitUsage);
  std::vector<char*> normalized_argv;
  for (std::string& arg : *normalized) normalized_argv.push_back(arg.data());
  const std::vector<char*> args = absl::ParseCommandLine(
      static_cast<int>(normalized_argv.size()), normalized_argv.data());
  if (args.size() < 2) {
    return UsageError(
        "missing subcommand: search, layout, frontier, plan, describe, "
        "health, gpus or version");
  }
  if (args.size() > 2) {
    return UsageError(absl::StrCat("unexpected argument '", args[2], "'"));
  }
  const absl::string_view command = args[1];
  if (command == "search") return Plan(kSearch, command, RunSearch);
  if (command == "layout") return Plan(kLayout, command, RunLayout);
  if (command == "frontier") return Plan(kFrontier, command, RunFrontier);
  if (command == "describe") return Describe();
  if (command == "plan") return ClusterPlan();
  if (command == "health") return Health();
  if (command == "gpus") {
    std::cout << FormatGpuPresets() << std::flush;
    return 0;
  }
  if (command == "version") {
    std::cout << VersionText() << std::flush;
    return 0;
  }
  return UsageError(absl::StrCat(
      "unknown subcommand '", command,
      "' (expected search, layout, frontier, plan, describe, health, gpus "
      "or version)"));
}

}  // namespace
}  // namespace chunkplan::cli

int main(int argc, char* argv[]) { return chunkplan::cli::Run(argc, argv); }
