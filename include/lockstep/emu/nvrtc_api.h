// NVRTC (<nvrtc.h>) on the emulator: a program compiles CUDA source at run
// time and loads the result with the driver API (driver_api.h), as it would on
// a GPU. Here compiling runs `lockstep nvcc -fatbin` over the source, and the
// "CUBIN" (or "PTX") is the shared object of emulated kernels that
// cuModuleLoadData loads. Options are NVRTC's: include paths, macros,
// --std and --pre-include are used; GPU code-generation options are ignored.
// Name expressions ("kernel<float>", "ns::k") are instantiated, and their
// lowered names are the mangled names cuModuleGetFunction finds.
#pragma once
#include <cstddef>

#define NVRTC_GET_TYPE_NAME 0

enum nvrtcResult {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
  NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
  NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
  NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
  NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
  NVRTC_ERROR_INTERNAL_ERROR = 11,
  NVRTC_ERROR_TIME_FILE_WRITE_FAILED = 12,
};

struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

const char* nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcVersion(int* major, int* minor);
nvrtcResult nvrtcGetNumSupportedArchs(int* count);
nvrtcResult nvrtcGetSupportedArchs(int* architectures);
nvrtcResult nvrtcCreateProgram(nvrtcProgram* program, const char* source, const char* name, int header_count, const char* const* headers,
                               const char* const* include_names);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* program);
nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int option_count, const char* const* options);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram program, std::size_t* bytes);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram program, char* log);
// The module, under each of NVRTC's names for its output.
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram program, std::size_t* bytes);
nvrtcResult nvrtcGetCUBIN(nvrtcProgram program, char* cubin);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram program, std::size_t* bytes);
nvrtcResult nvrtcGetPTX(nvrtcProgram program, char* ptx);
nvrtcResult nvrtcGetLTOIRSize(nvrtcProgram program, std::size_t* bytes);
nvrtcResult nvrtcGetLTOIR(nvrtcProgram program, char* ltoir);
nvrtcResult nvrtcAddNameExpression(nvrtcProgram program, const char* name_expression);
nvrtcResult nvrtcGetLoweredName(nvrtcProgram program, const char* name_expression, const char** lowered_name);
