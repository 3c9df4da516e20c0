#include "builtin.h"

#include <map>
#include <mutex>

#include "lockstep/emu/options.h"

namespace lockstep::detail {

bool ops_run_checked() { return emu::get_options().checks != 0; }

const function& builtin_function(const device& d, const std::string& name, bool checked) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, function> functions;
  std::lock_guard lock(mutex);
  const auto key = std::make_pair(d.str() + (checked ? " checked" : ""), name);
  auto it = functions.find(key);
  if (it == functions.end()) it = functions.emplace(key, builtin_kernels(d, checked).get("lockstep::kernels::" + name)).first;
  return it->second;
}

const function& builtin_function(const device& d, const std::string& name) { return builtin_function(d, name, ops_run_checked()); }

const function& builtin_function(const device& d, const std::string& family, dtype t) {
  return builtin_function(d, family + "<" + kernel_type_name(t) + ">");
}

kernel_arg pointer_arg(const tensor& t, bool writable) { return kernel_arg::pointer(t.data(), scalar_type_of(t.type()), !writable); }

kernel_arg layout_arg(const kernels::strided_layout& layout) { return kernel_arg::bytes(&layout, sizeof layout, alignof(kernels::strided_layout)); }

void launch_elementwise(const function& f, const tensor& out, const std::vector<tensor>& inputs, const std::vector<kernel_arg>& extra) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  std::vector<kernel_arg> args{pointer_arg(out, true), layout_arg(out.layout())};
  for (const tensor& in : inputs) {
    const tensor view = in.expand(out.shape());
    args.push_back(pointer_arg(view, false));
    args.push_back(layout_arg(view.layout()));
  }
  args.push_back(kernel_arg::integer(n));
  args.insert(args.end(), extra.begin(), extra.end());
  f.launch(grid_stride_config(n), args);
}

launch_config vector_launch_config(const device& d, std::int64_t vectors) {
  constexpr std::int64_t threads = kernels::vector_launch::threads, emulator_max_blocks = kernels::vector_launch::emulator_max_blocks;
  const std::int64_t max_blocks = d.kind == device::kind_t::cuda ? INT32_MAX : emulator_max_blocks;
  const auto blocks = static_cast<unsigned>(std::min((vectors + threads - 1) / threads, max_blocks));
  return launch_config{dim3(blocks), dim3(threads), 0, nullptr};
}

launch_config grid_stride_config(std::int64_t n) {
  constexpr std::int64_t threads = kernels::grid_stride_launch::threads, max_blocks = kernels::grid_stride_launch::max_blocks;
  const auto blocks = static_cast<unsigned>(std::min((n + threads - 1) / threads, max_blocks));
  return launch_config{dim3(blocks), dim3(threads), 0, nullptr};
}

void check_same_device(const char* op, const tensor& a, const tensor& b) {
  if (!(a.where() == b.where()))
    throw std::invalid_argument(std::string(op) + ": the inputs are on different devices (" + a.where().str() + " and " + b.where().str() +
                                "); move one with .to(device)");
}

}  // namespace lockstep::detail
