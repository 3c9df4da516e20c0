// lockstep._core: tensors with DLPack, the library's ops, run-time compiled
// kernels and their launches, devices and emulator options, for Python.
// python/lockstep/__init__.py builds the user-facing API on top.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"
#include "lockstep/errors.h"
#include "lockstep/jit/region_loops_availability.h"
#include "lockstep/launch_limits.h"
#include "lockstep/ops.h"
#include "lockstep/runtime.h"
#include "lockstep/tensor.h"

namespace nb = nanobind;
using namespace nb::literals;
using lockstep::tensor;

namespace {

// DLPack's type codes (dlpack.h): int, uint, float, bfloat, bool.
constexpr std::uint8_t dl_int = 0, dl_uint = 1, dl_float = 2, dl_bfloat = 4, dl_bool = 6;

lockstep::dtype dtype_from_dlpack(nb::dlpack::dtype t) {
  if (t.lanes == 1) {
    if (t.code == dl_bool && t.bits == 8) return lockstep::dtype::boolean;
    if (t.code == dl_uint && t.bits == 8) return lockstep::dtype::uint8;
    if (t.code == dl_int && t.bits == 32) return lockstep::dtype::int32;
    if (t.code == dl_int && t.bits == 64) return lockstep::dtype::int64;
    if (t.code == dl_float && t.bits == 16) return lockstep::dtype::float16;
    if (t.code == dl_bfloat && t.bits == 16) return lockstep::dtype::bfloat16;
    if (t.code == dl_float && t.bits == 32) return lockstep::dtype::float32;
    if (t.code == dl_float && t.bits == 64) return lockstep::dtype::float64;
  }
  throw nb::type_error(("lockstep tensors hold bool, uint8, int32, int64, float16, bfloat16, float32 or float64; got DLPack type code " +
                        std::to_string(t.code) + " with " + std::to_string(t.bits) + " bits; convert the array first (e.g. .astype(numpy.float32))")
                           .c_str());
}

nb::dlpack::dtype dlpack_from_dtype(lockstep::dtype t) {
  switch (t) {
    case lockstep::dtype::boolean:
      return {dl_bool, 8, 1};
    case lockstep::dtype::uint8:
      return {dl_uint, 8, 1};
    case lockstep::dtype::int32:
      return {dl_int, 32, 1};
    case lockstep::dtype::int64:
      return {dl_int, 64, 1};
    case lockstep::dtype::float16:
      return {dl_float, 16, 1};
    case lockstep::dtype::bfloat16:
      return {dl_bfloat, 16, 1};
    case lockstep::dtype::float32:
      return {dl_float, 32, 1};
    case lockstep::dtype::float64:
      return {dl_float, 64, 1};
  }
  return {dl_float, 32, 1};
}

// Any DLPack or buffer-protocol array (NumPy, PyTorch, CuPy; CPU or CUDA) as a
// tensor over the same memory; the array stays alive while the tensor does.
// Read-only arrays are accepted (the ops never write their inputs); the
// tensor does not remember that, but an array passed straight to a kernel
// does (see to_kernel_arg).
template <class Array>
tensor tensor_over(const Array& array) {
  lockstep::device where = lockstep::device::cpu();
  if (array.device_type() == nb::device::cuda::value)
    where = lockstep::device::cuda(array.device_id());
  else if (array.device_type() != nb::device::cpu::value)
    throw nb::type_error(
        ("lockstep reads arrays in CPU or CUDA memory; this one is on DLPack device type " + std::to_string(array.device_type())).c_str());
  lockstep::shape_t shape(array.ndim()), strides(array.ndim());
  for (std::size_t d = 0; d < array.ndim(); ++d) {
    shape[d] = static_cast<std::int64_t>(array.shape(d));
    strides[d] = array.stride(d);
  }
  const lockstep::dtype type = dtype_from_dlpack(array.dtype());
  // Check mode's memcheck accepts host memory only where it is registered:
  // the bytes this view can reach, while the tensor lives.
  const void* first_byte = nullptr;
  if (where.kind == lockstep::device::kind_t::cpu && array.size() > 0) {
    std::int64_t low = 0, high = 0;
    for (std::size_t d = 0; d < array.ndim(); ++d) (strides[d] < 0 ? low : high) += (shape[d] - 1) * strides[d];
    const auto item = static_cast<std::int64_t>(lockstep::itemsize(type));
    first_byte = static_cast<const char*>(static_cast<const void*>(array.data())) + low * item;
    lockstep::emu::register_host_memory(first_byte, static_cast<std::size_t>((high - low + 1) * item), "a host array");
  }
  auto* held = new Array(array);
  std::shared_ptr<void> owner(held, [first_byte](void* p) {
    if (first_byte) lockstep::emu::unregister_host_memory(first_byte);
    nb::gil_scoped_acquire gil;  // the last tensor may go away in code that released the GIL
    delete static_cast<Array*>(p);
  });
  return tensor::wrap(const_cast<void*>(static_cast<const void*>(array.data())), shape, strides, type, where, std::move(owner));
}

// `read_only` (if given) tells whether the array's memory is read-only.
tensor from_dlpack_object(nb::handle obj, bool* read_only = nullptr) {
  nb::ndarray<> writable;
  if (nb::try_cast(obj, writable)) {
    if (read_only) *read_only = false;
    return tensor_over(writable);
  }
  nb::ndarray<nb::ro> constant;
  if (nb::try_cast(obj, constant)) {
    if (read_only) *read_only = true;
    return tensor_over(constant);
  }
  throw nb::type_error(
      ("lockstep needs an array with __dlpack__ or the buffer protocol (NumPy, PyTorch, CuPy), got " + std::string(nb::type_name(obj.type()).c_str()))
          .c_str());
}

tensor from_dlpack(nb::handle array) { return from_dlpack_object(array); }

// The tensor's memory as an ndarray for `Framework`, kept alive by a copy of
// the tensor held in a capsule.
template <class... Framework>
nb::ndarray<Framework...> export_tensor(const tensor& t) {
  std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<std::int64_t> strides(t.strides().begin(), t.strides().end());
  nb::capsule owner(new tensor(t), [](void* p) noexcept { delete static_cast<tensor*>(p); });
  const bool on_gpu = t.where().kind == lockstep::device::kind_t::cuda;
  return nb::ndarray<Framework...>(t.data(), t.ndim(), shape.data(), owner, strides.data(), dlpack_from_dtype(t.type()),
                                   on_gpu ? nb::device::cuda::value : nb::device::cpu::value, on_gpu ? t.where().index : 0);
}

nb::tuple as_tuple(const std::vector<std::int64_t>& v) {
  nb::list l;
  for (auto x : v) l.append(x);
  return nb::tuple(l);
}

dim3 as_dim3(const std::vector<unsigned>& v, const char* what) {
  if (v.empty() || v.size() > 3) throw nb::value_error((std::string(what) + " must have 1 to 3 extents").c_str());
  return dim3(v[0], v.size() > 1 ? v[1] : 1, v.size() > 2 ? v[2] : 1);
}

// A Python launch argument as a kernel_arg: tensors (and DLPack arrays) as
// pointers to their element type, ints and floats as untyped numbers the
// runtime converts to the parameter's type, bytes by value.
lockstep::kernel_arg to_kernel_arg(nb::handle value, std::size_t index, const lockstep::device& where, std::vector<tensor>& keep) {
  if (nb::isinstance<tensor>(value) || nb::hasattr(value, "__dlpack__")) {
    bool read_only = false;
    tensor t = nb::isinstance<tensor>(value) ? nb::cast<tensor>(value) : from_dlpack_object(value, &read_only);
    if (!(t.where() == where))
      throw lockstep::argument_error("argument " + std::to_string(index) + " is on " + t.where().str() + " but the kernel runs on " + where.str() +
                                     "; move it with .to(\"" + where.str() + "\")");
    // The kernel gets the address of the first element and nothing else, so
    // it can only index memory laid out row-major without gaps.
    if (!t.is_contiguous())
      throw lockstep::argument_error(
          "argument " + std::to_string(index) + " is not contiguous (" + t.describe() + " with strides " +
          std::string(nb::str(as_tuple(t.strides())).c_str()) +
          " in elements); a kernel gets only its data pointer: pass x.contiguous() (a copy), and copy back what the kernel writes");
    keep.push_back(t);
    // A read-only array passed as it is may only meet a const pointer parameter.
    return lockstep::kernel_arg::pointer(t.data(), lockstep::scalar_type_of(t.type()), read_only);
  }
  if (nb::isinstance<nb::bool_>(value)) return lockstep::kernel_arg::integer(nb::cast<bool>(value) ? 1 : 0);
  if (nb::isinstance<nb::int_>(value)) {
    long long v = 0;
    if (!nb::try_cast(value, v))
      throw lockstep::argument_error("argument " + std::to_string(index) + " is the integer " + std::string(nb::str(value).c_str()) +
                                     ", which does not fit in 64 bits");
    return lockstep::kernel_arg::integer(v);
  }
  if (nb::isinstance<nb::float_>(value)) return lockstep::kernel_arg::real(nb::cast<double>(value));
  if (nb::isinstance<nb::bytes>(value)) {
    const nb::bytes b = nb::borrow<nb::bytes>(value);
    return lockstep::kernel_arg::bytes(b.c_str(), b.size(), 0);
  }
  throw lockstep::argument_error("argument " + std::to_string(index) + " has type " + std::string(nb::type_name(value.type()).c_str()) +
                                 "; pass a lockstep.Tensor or array (NumPy, PyTorch, CuPy), an int, a float, or bytes for a struct");
}

void launch(const lockstep::function& f, const std::string& device, std::vector<unsigned> grid, std::vector<unsigned> block, std::size_t shared_bytes,
            std::uintptr_t stream, nb::list args, bool cooperative) {
  const lockstep::device where = lockstep::device::parse(device);
  if (cooperative && where.kind != lockstep::device::kind_t::cpu)
    // Refused, not run as a plain launch: grid.sync() without every block resident would hang.
    throw std::invalid_argument(
        "a cooperative launch of a compiled module runs on the emulator (\"cpu\") for now: the GPU's module launcher "
        "(src/runtime/cubin_module.cpp) launches with cuLaunchKernel");
  std::vector<tensor> keep;
  std::vector<lockstep::kernel_arg> packed;
  for (std::size_t i = 0; i < args.size(); ++i) packed.push_back(to_kernel_arg(args[i], i, where, keep));
  const lockstep::launch_config config{as_dim3(grid, "grid"), as_dim3(block, "block"), shared_bytes, reinterpret_cast<cudaStream_t>(stream),
                                       cooperative};
  nb::gil_scoped_release no_gil;
  f.launch(config, packed);
}

nb::dict emulator_options() {
  const lockstep::emu::options o = lockstep::emu::get_options();
  nb::dict d;
  d["workers"] = o.workers;
  d["order"] = lockstep::emu::to_string(o.order);
  d["seed"] = o.seed;
  d["stack_kib"] = o.stack_bytes / 1024;
  d["checks"] = lockstep::emu::checks_to_string(o.checks);
  d["timeout"] = o.timeout_seconds;
  d["region_loops"] = o.region_loops;
  return d;
}

void set_emulator_options(std::optional<unsigned> workers, std::optional<std::string> order, std::optional<std::uint64_t> seed,
                          std::optional<std::size_t> stack_kib, std::optional<std::string> checks, std::optional<double> timeout,
                          std::optional<bool> region_loops) {
  lockstep::emu::options o = lockstep::emu::get_options();
  if (workers) o.workers = *workers;
  if (order) {
    if (*order != "forward" && *order != "reverse" && *order != "random")
      throw nb::value_error(("order must be one of 'forward', 'reverse', 'random', got '" + *order + "'").c_str());
    o.order = lockstep::emu::parse_thread_order(*order, nullptr);
  }
  if (seed) o.seed = *seed;
  if (stack_kib) o.stack_bytes = *stack_kib * 1024;
  if (checks) o.checks = lockstep::emu::parse_checks(*checks);  // std::invalid_argument -> ValueError
  if (timeout) o.timeout_seconds = *timeout;
  if (region_loops) o.region_loops = *region_loops;
  lockstep::emu::set_options(o);
}

// lockstep::matmul_algos() as Python dicts (see _core.matmul_algos).
nb::list matmul_algos() {
  nb::list algos;
  for (const lockstep::matmul_algo_info& a : lockstep::matmul_algos()) {
    nb::dict row;
    row["name"] = a.name;
    row["family"] = a.family;
    nb::list dtypes;
    for (lockstep::dtype t : a.dtypes) dtypes.append(lockstep::dtype_name(t));
    row["dtypes"] = dtypes;
    nb::dict kernels;
    for (const auto& [t, kernel] : a.kernels) kernels[lockstep::dtype_name(t)] = kernel;
    row["kernels"] = kernels;
    row["batched_kernel"] = a.batched_kernel.empty() ? nb::none() : nb::cast(a.batched_kernel);
    row["block"] = nb::make_tuple(a.block.x, a.block.y, a.block.z);
    row["tile_m"] = a.tile_m;
    row["tile_n"] = a.tile_n;
    row["tile_k_bytes"] = a.tile_k_bytes;
    row["shared_bytes"] = a.shared_bytes;
    row["tensor_cores"] = a.tensor_cores;
    row["fused_epilogue"] = a.fused_epilogue;
    row["gpu_only"] = a.gpu_only;
    row["arch"] = a.arch.empty() ? nb::none() : nb::cast(a.arch);
    row["lecture"] = a.lecture;
    algos.append(row);
  }
  return algos;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "lockstep's compiled core; use the lockstep package.";

  // Translators are tried newest first, so base classes are registered first.
  nb::exception<lockstep::cuda_error> cuda_error(m, "CudaError", PyExc_RuntimeError);
  nb::exception<lockstep::launch_error>(m, "LaunchError", cuda_error);
  nb::exception<lockstep::kernel_error>(m, "KernelError", cuda_error);
  nb::exception<lockstep::argument_error>(m, "ArgumentError", PyExc_TypeError);
  nb::exception<lockstep::shape_error>(m, "ShapeError", PyExc_ValueError);
  nb::exception<lockstep::device_unavailable>(m, "DeviceUnavailable", PyExc_RuntimeError);
  for (auto [name, doc] :
       {std::pair{"CudaError", "A CUDA error; the message starts with CUDA's error name (cudaErrorInvalidConfiguration, ...)."},
        std::pair{"LaunchError", "A launch refused before it ran: grid, block or shared memory outside the device's limits."},
        std::pair{"KernelError",
                  "A kernel that failed while it ran: a fault (a bad address, a stack overflow, __trap()), a device assert, a deadlock at a barrier, "
                  "a bad warp mask, a time limit."},
        std::pair{"ArgumentError", "Kernel arguments that do not match the kernel's parameters (count, type, range, device)."},
        std::pair{"ShapeError", "Shapes that do not broadcast, reshape or multiply; dims out of range."},
        std::pair{"DeviceUnavailable", "A device that cannot be used here: no NVIDIA driver, no such GPU, kernels not installed."}})
    m.attr(name).attr("__doc__") = doc;
  static nb::object compile_error_type = nb::borrow(PyErr_NewExceptionWithDoc(
      "lockstep._core.CompileError", "Source that did not compile; .log holds the compiler's messages.", PyExc_RuntimeError, nullptr));
  m.attr("CompileError") = compile_error_type;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const lockstep::compile_error& e) {
      // The exception carries the compiler's log as `.log`.
      nb::object error = compile_error_type(e.what());
      error.attr("log") = e.log();
      PyErr_SetObject(compile_error_type.ptr(), error.ptr());
    }
  });
  // A launch that SIGINT stopped: lockstep's handler called Python's too, so
  // Python's KeyboardInterrupt (or whatever its handler raises) comes here, as
  // the launch returns; the next launch works.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const lockstep::launch_interrupted& e) {
      if (PyErr_CheckSignals() == 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });

  m.def("cuda_available", &lockstep::cuda_available, "True when an NVIDIA driver loads and sees at least one GPU.");
  m.def("cuda_device_count", &lockstep::cuda_device_count, "How many GPUs the NVIDIA driver sees (0 without a driver).");
  m.def("cuda_unavailable_reason", &lockstep::cuda_unavailable_reason,
        "Why cuda_available() is false, in words that say what to do; \"\" when it is true.");
  m.def("region_loops_unavailable_reason", &lockstep::region_loops_unavailable_reason,
        "Why kernels with barriers compiled for \"cpu\" run on fibers, not as region loops, because no libclang loads (and the fix); \"\" when "
        "libclang is there.");
  m.def("device_name", [](const std::string& d) { return lockstep::device_name(lockstep::device::parse(d)); });
  m.def("device_arch", [](const std::string& d) { return lockstep::device_arch(lockstep::device::parse(d)); });
  m.def("check_device", [](const std::string& d) { return lockstep::device::parse(d).str(); });
  m.def(
      "max_cooperative_blocks",
      [](const std::string& d, unsigned threads, std::size_t shared_bytes) {
        if (lockstep::device::parse(d).kind != lockstep::device::kind_t::cpu)
          throw std::invalid_argument("max_cooperative_blocks: cooperative launches of compiled modules run on the emulator (\"cpu\") for now");
        // The emulator's answer, as its cooperative launch check counts (the H100's SMs and residency rules).
        return lockstep::max_blocks_per_sm(lockstep::h100_sm_limits, threads, lockstep::emulated_registers_per_thread, shared_bytes) *
               lockstep::h100_sm_limits.multiprocessors;
      },
      "device"_a, "threads"_a, "shared_bytes"_a,
      "How many blocks of `threads` threads using `shared_bytes` of shared memory a cooperative launch on the device holds at once.");
  m.def("synchronize", [](const std::string& d) {
    const auto where = lockstep::device::parse(d);
    nb::gil_scoped_release no_gil;
    lockstep::synchronize(where);
  });
  m.def("emulator_options", &emulator_options,
        "The emulator's options: a dict with workers (OS threads running blocks), order (\"forward\", \"reverse\" or \"random\": "
        "the order a block's threads start and resume after a barrier), seed (for \"random\"), stack_kib, checks and timeout "
        "(seconds a launch may run before it fails with cudaErrorLaunchTimeout; 0: no limit) and region_loops (kernels split at their "
        "barriers run each block as loops over its threads; False: every kernel on fibers, one per thread).");
  m.def("set_emulator_options", &set_emulator_options, "workers"_a = nb::none(), "order"_a = nb::none(), "seed"_a = nb::none(),
        "stack_kib"_a = nb::none(), "checks"_a = nb::none(), "timeout"_a = nb::none(), "region_loops"_a = nb::none(),
        "Change the emulator options that are given (not None); the others keep their values.");
  m.def("set_poison_new_tensors", &lockstep::set_poison_new_tensors, "on"_a,
        "Fill new tensors with 0xff bytes (NaN for floats), so that elements a kernel forgets to write stand out (for tests).");

  nb::class_<tensor>(m, "Tensor", "A strided tensor on a lockstep device (see lockstep.asarray).")
      .def_prop_ro(
          "shape", [](const tensor& t) { return as_tuple(t.shape()); }, "The extents, a tuple of ints.")
      .def_prop_ro(
          "strides", [](const tensor& t) { return as_tuple(t.strides()); }, "Strides in elements (not bytes, unlike NumPy's).")
      .def_prop_ro(
          "dtype", [](const tensor& t) { return lockstep::dtype_name(t.type()); },
          "The element type's name: bool, uint8, int32, int64, float16, bfloat16, float32 or float64.")
      .def_prop_ro(
          "device", [](const tensor& t) { return t.where().str(); }, "\"cpu\" or \"cuda:N\".")
      .def_prop_ro("ndim", &tensor::ndim, "The number of dimensions.")
      .def_prop_ro("size", &tensor::numel, "The number of elements.")
      .def_prop_ro(
          "data_ptr", [](const tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data()); },
          "The address of the first element (host or device memory), as an int.")
      .def("is_contiguous", &tensor::is_contiguous, "Whether the elements lie row-major without gaps.")
      .def("permute", &tensor::permute, "dims"_a, "A view with the dimensions reordered.")
      .def("transpose", &tensor::transpose, "dim0"_a, "dim1"_a, "A view with two dimensions swapped.")
      .def("reshape", &tensor::reshape, "shape"_a, "A view with another shape (one extent may be -1); ShapeError when the strides do not allow one.")
      .def("slice", &tensor::slice, "dim"_a, "start"_a, "stop"_a, "step"_a = 1, "A view of every step-th index in [start, stop) of dim.")
      .def("select", &tensor::select, "dim"_a, "index"_a, "A view of one index of dim, which it drops.")
      .def("flip_view", &tensor::flip, "dim"_a, "A view with dim in reverse order (a negative stride).")
      .def("unsqueeze", &tensor::unsqueeze, "dim"_a, "A view with a new dimension of extent 1 at dim.")
      .def("expand", &tensor::expand, "shape"_a, "A view broadcast to shape (extents of 1 repeat with stride 0).")
      .def("contiguous", &tensor::contiguous, "This tensor if contiguous, else a packed copy.")
      .def("clone", &tensor::clone, "A packed copy.")
      .def(
          "to_device",
          [](const tensor& t, const std::string& d) {
            const auto where = lockstep::device::parse(d);
            nb::gil_scoped_release no_gil;
            return t.to(where);
          },
          "device"_a, "A copy on the device (this tensor when it is already there); use .to().")
      .def(
          "to_dtype", [](const tensor& t, const std::string& d) { return t.to(lockstep::parse_dtype(d)); }, "dtype"_a,
          "A copy converted to the dtype (this tensor when it has it); use .to().")
      .def(
          "numpy_view",
          [](const tensor& t) {
            if (t.where().kind != lockstep::device::kind_t::cpu)
              throw nb::type_error(("this tensor is on " + t.where().str() + "; copy it to the host with .to(\"cpu\") first").c_str());
            return export_tensor<nb::numpy>(t);
          },
          "A NumPy array over this CPU tensor's memory (no copy); use .numpy().")
      .def(
          "__dlpack__", [](const tensor& t, nb::handle, nb::handle, nb::handle, nb::handle) { return export_tensor<>(t); }, "stream"_a = nb::none(),
          "max_version"_a = nb::none(), "dl_device"_a = nb::none(), "copy"_a = nb::none(),
          "The tensor as a DLPack capsule (the array API's protocol; used by numpy/torch/cupy.from_dlpack).")
      .def(
          "__dlpack_device__",
          [](const tensor& t) {
            const bool gpu = t.where().kind == lockstep::device::kind_t::cuda;
            return nb::make_tuple(gpu ? nb::device::cuda::value : nb::device::cpu::value, gpu ? t.where().index : 0);
          },
          "(DLPack device type, device index): (1, 0) on the CPU, (2, N) on cuda:N.");

  m.def("from_dlpack", &from_dlpack, "array"_a, "A tensor over the array's memory (no copy).");
  m.def("empty", [](const std::vector<std::int64_t>& shape, const std::string& dtype, const std::string& d) {
    return tensor::empty(shape, lockstep::parse_dtype(dtype), lockstep::device::parse(d));
  });
  m.def("map", [](const std::string& op, const tensor& x) {
    const auto o = lockstep::parse_unary_op(op);
    nb::gil_scoped_release no_gil;
    return lockstep::map(o, x);
  });
  m.def("zip", [](const std::string& op, const tensor& a, const tensor& b) {
    const auto o = lockstep::parse_binary_op(op);
    nb::gil_scoped_release no_gil;
    return lockstep::zip(o, a, b);
  });
  m.def("zip_into", [](const std::string& op, const tensor& a, const tensor& b, const tensor& out) {
    const auto o = lockstep::parse_binary_op(op);
    nb::gil_scoped_release no_gil;
    lockstep::zip_into(o, a, b, out);
  });
  m.def("copy_into", [](const tensor& dst, const tensor& source) {
    nb::gil_scoped_release no_gil;
    lockstep::copy_into(dst, source);
  });
  m.def("where", [](const tensor& condition, const tensor& a, const tensor& b) {
    nb::gil_scoped_release no_gil;
    return lockstep::where(condition, a, b);
  });
  m.def("index_select", [](const tensor& x, int dim, const tensor& index) {
    nb::gil_scoped_release no_gil;
    return lockstep::index_select(x, dim, index);
  });
  m.def("fill_sequence", [](const tensor& out, double start, double step, double end, bool from_end) {
    nb::gil_scoped_release no_gil;
    lockstep::fill_sequence(out, start, step, end, from_end);
  });
  m.def("fill_random", [](const tensor& out, std::uint64_t seed, std::uint64_t offset, int kind, double low, double high) {
    nb::gil_scoped_release no_gil;
    lockstep::fill_random(out, seed, offset, static_cast<lockstep::random_kind>(kind), low, high);
  });
  m.def("arg_reduce", [](const tensor& x, int dim, bool keepdim, bool want_max) {
    nb::gil_scoped_release no_gil;
    return lockstep::arg_reduce(x, dim, keepdim, want_max);
  });
  m.def("reduce", [](const std::string& op, const tensor& x, int dim, bool keepdim) {
    const auto o = lockstep::parse_reduce_op(op);
    nb::gil_scoped_release no_gil;
    return lockstep::reduce(o, x, dim, keepdim);
  });
  m.def("reduce_all", [](const std::string& op, const tensor& x) {
    const auto o = lockstep::parse_reduce_op(op);
    nb::gil_scoped_release no_gil;
    return lockstep::reduce_all(o, x);
  });
  m.def(
      "matmul",
      [](const tensor& a, const tensor& b, const std::string& algo, double alpha, std::optional<tensor> bias, std::optional<tensor> residual,
         std::optional<std::string> activation) {
        lockstep::matmul_epilogue_args epilogue{alpha, std::move(bias), std::move(residual), std::nullopt};
        if (activation) epilogue.activation = std::move(*activation);
        nb::gil_scoped_release no_gil;
        return lockstep::matmul(a, b, algo, epilogue);
      },
      "a"_a, "b"_a, "algo"_a = "auto", nb::kw_only(), "alpha"_a = 1.0, "bias"_a = nb::none(), "residual"_a = nb::none(), "activation"_a = nb::none(),
      "a @ b with one of matmul_algos() (\"auto\": auto_matmul_algo), batch dimensions broadcast, and the epilogue "
      "act(alpha * (a @ b) + bias) + residual: bias of shape (n,) or (1, n), residual of the output's shape, both of its dtype and device; "
      "activation a unary op's name (\"relu\", \"gelu\", \"gelu_tanh\", \"sigmoid\", \"tanh\", ...). The algos with fused_epilogue "
      "apply it as they store the product; after the others it is applied with map and zip.");
  m.def("matmul_algos", &matmul_algos,
        "Every matmul algo, simplest first, as a dict: name, family (\"simt\", \"tensor_core\" or \"reference\"), dtypes (the "
        "input dtypes it takes), kernels (dtype -> kernel name in lockstep::kernels), batched_kernel, block, tile_m, tile_n, "
        "tile_k_bytes, shared_bytes (dynamic), tensor_cores, fused_epilogue (its kernels apply matmul's epilogue), gpu_only, arch "
        "(the GPUs it needs, or None) and lecture (the "
        "lecture's own kernels). From the kernels' recipe tables (include/lockstep/kernels/matmul_recipes.h).");
  m.def(
      "auto_matmul_candidates", [](const std::string& dtype) { return lockstep::auto_matmul_candidates(lockstep::parse_dtype(dtype)); }, "dtype"_a,
      "The algos matmul's \"auto\" considers for inputs of this dtype on a GPU, in order: it runs the first the device runs "
      "(auto_matmul_algo says what it runs on the emulator).");
  m.def(
      "auto_matmul_algo",
      [](const std::string& dtype, const std::string& d) {
        return lockstep::auto_matmul_algo(lockstep::parse_dtype(dtype), lockstep::device::parse(d));
      },
      "dtype"_a, "device"_a, "The algo matmul's \"auto\" runs for inputs of this dtype on this device.");
  m.def("rgb_to_grayscale", [](const tensor& image, const std::string& launch) {
    nb::gil_scoped_release no_gil;
    return lockstep::rgb_to_grayscale(image, launch);
  });
  m.def("copy", [](const tensor& x) {
    nb::gil_scoped_release no_gil;
    return lockstep::copy(x);
  });

  nb::class_<lockstep::event>(m, "Event", "A marker in a device's default stream, for timing device work (like torch.cuda.Event).")
      .def(
          "__init__", [](lockstep::event* e, const std::string& d) { new (e) lockstep::event(lockstep::device::parse(d)); }, "device"_a)
      .def(
          "record", [](lockstep::event& e) { e.record(nullptr); }, "Mark the point after the work queued so far.")
      .def(
          "synchronize",
          [](lockstep::event& e) {
            nb::gil_scoped_release no_gil;
            e.synchronize();
          },
          "Wait until the device has reached this marker.")
      .def(
          "elapsed_ms", [](const lockstep::event& start, const lockstep::event& stop) { return lockstep::event::elapsed_ms(start, stop); }, "stop"_a,
          "Milliseconds of device time from this recorded event to `stop` (both reached).");
  nb::class_<lockstep::module>(m, "Module")
      .def_prop_ro("names", &lockstep::module::names)
      .def_prop_ro("device", [](const lockstep::module& mod) { return mod.where().str(); })
      .def_prop_ro("from_cache", &lockstep::module::from_cache)
      .def("get", &lockstep::module::get);
  nb::class_<lockstep::function>(m, "Function")
      .def_prop_ro("name", &lockstep::function::name)
      .def_prop_ro("signature", &lockstep::function::signature_text)
      .def("set_max_dynamic_shared_bytes", &lockstep::function::set_max_dynamic_shared_bytes)
      .def_prop_ro("engine",
                   [](const lockstep::function& f) {
                     const lockstep::function::engine_answer e = f.engine();
                     return std::make_tuple(e.engine, e.why, e.where);
                   })
      .def("take_fibers_notice", &lockstep::function::take_fibers_notice)
      .def("launch", &launch, "device"_a, "grid"_a, "block"_a, "shared_bytes"_a, "stream"_a, "args"_a, "cooperative"_a = false);

  m.def(
      "compile",
      [](const std::string& source, const std::string& d, std::vector<std::string> names, std::vector<std::string> defines,
         std::vector<std::string> include_dirs, const std::string& std, const std::string& arch, std::vector<std::string> flags,
         const std::string& source_name) {
        lockstep::compile_options o;
        o.names = std::move(names);
        o.defines = std::move(defines);
        o.include_dirs = std::move(include_dirs);
        o.std = std;
        o.arch = arch;
        o.flags = std::move(flags);
        o.source_name = source_name;
        // Kernels compiled inside `with lockstep.check():` are instrumented, as the library's ops then are.
        o.checked = lockstep::emu::get_options().checks != 0;
        const auto where = lockstep::device::parse(d);
        nb::gil_scoped_release no_gil;
        return lockstep::compile(source, o, where);
      },
      "source"_a, "device"_a, "names"_a, "defines"_a, "include_dirs"_a, "std"_a, "arch"_a, "flags"_a, "source_name"_a);
}
