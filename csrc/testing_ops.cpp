// Test-only entry points (namespace flygemm_testing): they exercise the production code paths
// with inputs that a CPU-only machine can provide.
#include <torch/library.h>

#include <deque>
#include <sstream>

#include "dispatch.h"
#include "ops_common.h"

namespace flygemm {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream is(s);
  while (std::getline(is, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

DType parse_dtype(const std::string& name) {
  auto d = dtype_code_from_name(name);
  TORCH_CHECK(d, "dispatch_lookup: unknown dtype '", name, "'");
  return *d;
}

WeightLayout parse_layout(const std::string& name) {
  TORCH_CHECK(name == "plain" || name == "preshuffled", "dispatch_lookup: unknown weight layout '", name, "'");
  return name == "plain" ? WeightLayout::plain : WeightLayout::preshuffled;
}

// Holds the strings the parsed records point into.
struct ParsedTable {
  std::deque<std::string> strings;
  std::deque<KernelRecord> kernels;
  std::deque<DispatchRow> rows;
  KernelTable table;
  const char* keep(const std::string& s) { return strings.emplace_back(s).c_str(); }
};

// kernels_csv lines: name,arch,op,in_dtype,out_dtype,k_multiple,n_multiple,max_split_k
//                    [,tile_n,tile_k[,w_layout[,role[,tile_m,swap_ab[,min_blocks_per_sm,w_bulk[,stream_k[,area_speed
//                    [,by_cost[,schedule]]]]]]]]]
//                    (w_layout plain (default) or preshuffled; role: the record's meta "role", e.g. mx_to_bf16,
//                    may be empty; swap_ab 1: a swapped-operand tile kernel, tile_m weight rows by tile_n tokens;
//                    min_blocks_per_sm, w_bulk: a decode kernel's CTAs per SM and bulk-ring depth, 0 or empty
//                    for other kernels; stream_k 1: a tile kernel with the stream-K mode; area_speed: the kernels
//                    csv param of that name, per mille, 0 or empty when absent; by_cost 1: the kernels csv param of that name;
//                    schedule: the record's meta "schedule", e.g. pingpong, may be empty)
// rows_csv lines:    arch,op,in_dtype,out_dtype,m_max,N,K,kernel,split_k
void parse_into(ParsedTable& t, const std::string& kernels_csv, const std::string& rows_csv) {
  for (const std::string& line : split(kernels_csv, '\n')) {
    if (line.empty()) continue;
    auto f = split(line, ',');
    TORCH_CHECK(f.size() == 8 || f.size() == 10 || f.size() == 11 || f.size() == 12 || f.size() == 14 ||
                    f.size() == 16 || f.size() == 17 || f.size() == 18 || f.size() == 19 || f.size() == 20,
                "dispatch_lookup: kernel line needs 8, 10, 11, 12, 14, 16, 17, 18, 19 or 20 fields: ", line);
    KernelRecord k{};
    k.name = t.keep(f[0]);
    k.arch = t.keep(f[1]);
    k.family = k.op = t.keep(f[2]);
    k.in_dtype = parse_dtype(f[3]);
    k.out_dtype = parse_dtype(f[4]);
    k.requires_k_multiple = std::stoi(f[5]);
    k.requires_n_multiple = std::stoi(f[6]);
    k.max_split_k = std::stoi(f[7]);
    if (f.size() >= 10) {
      k.tile_n = std::stoi(f[8]);
      k.tile_k = std::stoi(f[9]);
    }
    k.w_layout = parse_layout(f.size() >= 11 ? f[10] : "plain");
    std::string meta;
    if (f.size() >= 12 && !f[11].empty()) meta += "\"role\": \"" + f[11] + "\"";
    if (f.size() >= 14) {
      k.tile_m = std::stoi(f[12]);
      if (f[13] == "1") meta += std::string(meta.empty() ? "" : ", ") + "\"swap_ab\": true";
    }
    for (size_t i = 14; i < std::min<size_t>(f.size(), 19); ++i) {
      const char* key = i == 14   ? "min_blocks_per_sm"
                        : i == 15 ? "w_bulk"
                        : i == 16 ? "stream_k"
                        : i == 17 ? "area_speed"
                                  : "by_cost";
      if (!f[i].empty() && f[i] != "0") meta += std::string(meta.empty() ? "" : ", ") + "\"" + key + "\": " + f[i];
    }
    if (f.size() >= 20 && !f[19].empty()) meta += std::string(meta.empty() ? "" : ", ") + "\"schedule\": \"" + f[19] + "\"";
    k.meta_json = meta.empty() ? "" : t.keep("{" + meta + "}");
    t.table.kernels.push_back(&t.kernels.emplace_back(k));
  }
  for (const std::string& line : split(rows_csv, '\n')) {
    if (line.empty()) continue;
    auto f = split(line, ',');
    TORCH_CHECK(f.size() == 9, "dispatch_lookup: row line needs 9 fields: ", line);
    DispatchRow r{t.keep(f[0]), t.keep(f[1]), parse_dtype(f[2]), parse_dtype(f[3]),
                  std::stoll(f[4]), std::stoll(f[5]), std::stoll(f[6]), t.keep(f[7]), std::stoi(f[8])};
    t.table.rows.push_back(&t.rows.emplace_back(r));
  }
}

// Returns "kernel,split_k,source" chosen by the production lookup over the given tables.
// w_layout: the caller's weight layout ("plain", "preshuffled"), or "" for unknown; sm_count: the device's SMs
// (0: the arch's reference part, as production without a device); device_name: the device's name ("": that part).
std::string dispatch_lookup(const std::string& kernels_csv, const std::string& rows_csv, const std::string& arch,
                            const std::string& op, const std::string& in_dtype, const std::string& out_dtype,
                            int64_t M, int64_t N, int64_t K, const std::string& w_layout, int64_t sm_count,
                            const std::string& device_name) {
  ParsedTable t;
  parse_into(t, kernels_csv, rows_csv);
  const auto kind = op_and_scaling(op);
  TORCH_CHECK(kind, "dispatch_lookup: unknown op ", op);
  Query q{arch, kind->first, parse_dtype(in_dtype), parse_dtype(out_dtype), M, N, K};
  q.row_scales = kind->second;
  if (!w_layout.empty()) q.w_layout = parse_layout(w_layout);
  q.sm_count = sm_count;
  q.device_name = device_name;
  Choice c = choose_kernel(t.table, q);
  log_miss(q, c);
  log_dispatch(q, c);
  return std::string(c.kernel->name) + "," + std::to_string(c.split_k) + "," + c.source;
}

}  // namespace
}  // namespace flygemm

TORCH_LIBRARY(flygemm_testing, m) {
  m.def("dispatch_lookup(str kernels_csv, str rows_csv, str arch, str op, str in_dtype, str out_dtype, int M, int N, int K, "
        "str w_layout=\"\", int sm_count=0, str device_name=\"\") -> str",
        &flygemm::dispatch_lookup);
  m.def("choice_cache_size() -> int", []() -> int64_t { return static_cast<int64_t>(flygemm::choice_cache_size()); });
}
