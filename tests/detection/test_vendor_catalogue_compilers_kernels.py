"""Recognition from what the JIT compilers and fused-kernel libraries of a training stack print, eleventh pass of
issue 9. Read from the artefacts, not from a corpus excerpt: the triton 3.9.0 wheel (runtime/errors.py,
compiler/errors.py, runtime/autotuner.py, backends/nvidia/compiler.py and driver.py), `strings` of ptxas and
libnvrtc.so.12 in nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvrtc-cu12 12.9.86, the flash-attn 2.8.3.post2 sdist
(csrc/flash_attn/flash_api.cpp), transformer-engine 2.20.2 (pytorch/quantization.py, the attention backend
selection, and the NVTE_ERROR / NVTE_CHECK_CUDNN macros of common/util/logging.h in transformer_engine_torch
2.20.2), xformers 0.0.35 (ops/fmha/dispatch.py, _cpp_lib.py), the deepspeed 0.19.8 sdist (op_builder/builder.py,
runtime/fp16/loss_scaler.py), bitsandbytes 0.50.2, cupy-cuda12x 14.2.0 (cuda/compiler.py), numba-cuda 0.30.4
(cudadrv/driver.py, cudadrv/error.py), torchao 0.18.0, liger-kernel 0.8.5 and the torch 2.14.1 wheel's inductor
(select_algorithm.py, runtime/triton_heuristics.py, cudagraph_utils.py, utils.py); apex's amp messages were read in
its repository's source (apex is not on PyPI). Each family also pins the lines that must stay "no failure": notices, fallbacks the software
takes by itself, autotuning progress and warnings it continues after. The torch.compile family of the ninth pass
is in test_vendor_catalogue_frameworks.py and is not repeated here."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, NONE = FailureKind.CRASH, FailureKind.NONE
STOP = RetryAdvice.STOP
APP, SYS = Category.APPLICATION, Category.SYSTEM_SOFTWARE

RANK = "[rank3]: "
OOR = (
    "out of resource: shared memory, Required: 262144, Hardware limit: 232448. "
    "Reducing block sizes or `num_stages` may help."
)


# ------------------------------------------------------------------------------------------------------ Triton


@pytest.mark.parametrize(
    "line",
    [
        # runtime/errors.py OutOfResources.__str__, raised from the launch of a kernel whose config does not fit
        "triton.runtime.errors.OutOfResources: " + OOR,
        RANK + "triton.runtime.errors.OutOfResources: " + OOR,
        # compiler/errors.py: a static_assert in the kernel source, and the compile error's own header
        "triton.compiler.errors.CompileTimeAssertionFailure: at 10:4:",
        "triton.compiler.errors.CompilationError: at 12:8:",
        "triton.compiler.errors.UnsupportedLanguageConstruct: at 3:4:",
        # backends/nvidia/compiler.py: ptxas failing on the generated PTX
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error",
        "triton.runtime.errors.PTXASError: PTXAS error: `ptxas` failed with error code 255",
        # runtime/autotuner.py prune_configs
        "triton.runtime.errors.AutotunerError: Autotuner error: No valid autotuner configs after pruning. "
        "`early_config_prune` should return at least one config.",
    ],
)
def test_a_triton_kernel_that_does_not_compile_or_fit_is_the_programs_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("gpu_kernel_compile_failed", CRASH, APP, STOP)


def test_ptxas_crashing_under_triton_is_a_toolchain_fault_not_the_jobs_segfault(tmp_path):
    """backends/nvidia/compiler.py prints a banner naming "`ptxas` raised SIGSEGV", then raises PTXASError: the
    compiler subprocess crashed on the generated PTX, which repeats on every node (before: process_segfault,
    retried)."""
    text = (
        "================================================================\n"
        "`ptxas` raised SIGSEGV\n"
        "`ptxas` stderr:\n"
        "\n"
        "Repro command: /usr/local/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v "
        "--gpu-name=sm_90a /tmp/tmpq1w2e3.ptx -o /tmp/tmpq1w2e3.ptx.o\n"
        "please share the reproducer above with Triton project.\n"
        "triton.runtime.errors.PTXASError: PTXAS error: `ptxas` raised SIGSEGV\n"
    )
    assert answer(tmp_path, text) == ("gpu_kernel_compile_failed", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "torch._inductor.exc.InductorError: PTXASError: PTXAS error: `ptxas` raised SIGSEGV",
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nPTXASError: PTXAS error: `ptxas` "
        "raised SIGSEGV",
    ],
)
def test_a_ptxas_crash_reraised_by_torch_compile_is_not_the_jobs_segfault(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("gpu_kernel_compile_failed", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "text",
    [
        # the banner alone: the autotuner catches the PTXASError that follows it and tries the next config
        "================================================================\n`ptxas` raised SIGSEGV\n`ptxas` stderr:\n"
        "please share the reproducer above with Triton project.\n",
        "Internal Triton PTX codegen error\n`ptxas` stderr:\n",
        "`ptxas` failed with error code 255\n`ptxas` stderr:\n",
        # inductor select_algorithm.py's ignored choice, naming the same exception
        "[rank0]:E1201 05:00:00.123000 4242 torch/_inductor/select_algorithm.py:2100] [8/6] Runtime error during "
        "autotuning: \nNo valid triton configs. PTXASError: PTXAS error: `ptxas` raised SIGSEGV. \n"
        "Ignoring this choice.\n",
        "Autotuning failed with PTXAS error: `ptxas` raised SIGSEGV\n",
    ],
)
def test_a_ptxas_failure_the_autotuner_discards_stays_no_failure(tmp_path, text):
    """runtime/autotuner.py _bench catches PTXASError, OutOfResources and CompileTimeAssertionFailure of one config
    and goes on; the banner backends/nvidia/compiler.py prints before raising is therefore no failure by itself
    (before: process_segfault, a restart on a healthy log)."""
    assert kind_of(tmp_path, text) is NONE


def test_a_job_that_segfaults_by_itself_is_still_a_segfault(tmp_path):
    assert diagnose_text(tmp_path, "Segmentation fault (core dumped)\n").signature == "process_segfault"


@pytest.mark.parametrize(
    "line",
    [
        # runtime/autotuner.py _bench with TRITON_PRINT_AUTOTUNING: the config is discarded and tuning goes on
        "Autotuning failed with " + OOR,
        "Autotuning kernel _attn_fwd with config BLOCK_M: 128, BLOCK_N: 64, num_warps: 4, num_ctas: 1, num_stages: 3",
        "Triton autotuning for function _attn_fwd,",
        "please share the reproducer above with Triton project.",
        # inductor select_algorithm.py: log.error("Runtime error during autotuning: \n%s. \nIgnoring this choice.")
        "[rank0]:E1201 05:00:00.123000 4242 torch/_inductor/select_algorithm.py:2100] [8/6] Runtime error during "
        "autotuning: ",
        "[rank0]:E1201 05:00:00.123000 4242 torch/_inductor/select_algorithm.py:2100] [8/6] No valid triton "
        "configs. OutOfResources: " + OOR + ". ",
        "Ignoring this choice.",
        "This may mean this GPU is too small for max_autotune mode.",
    ],
)
def test_autotuning_progress_and_the_choices_it_discards_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


@pytest.mark.parametrize(
    "line",
    [
        # torch 2.14.1 _inductor/runtime/triton_heuristics.py: no config of a kernel without an alternative compiles
        "torch._inductor.exc.InductorError: NoTritonConfigsError: No valid triton configs. OutOfResources: " + OOR,
        "RuntimeError: No valid triton configs. PTXASError: PTXAS error: `ptxas` raised SIGSEGV",
    ],
)
def test_no_valid_triton_config_raised_is_a_failure_though_the_same_text_logged_by_the_autotuner_is_not(tmp_path, line):
    """The benign entry claims the log call of select_algorithm.py ("Runtime error during autotuning: ... No valid
    triton configs. ... Ignoring this choice."), not the exception that ends the compile."""
    assert answer(tmp_path, line + "\n") == ("gpu_kernel_compile_failed", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        # torch 2.14.1 _inductor/cudagraph_utils.py log_cudagraph_skip_and_bump_counter and _inductor/utils.py
        "W1201 05:00:00.123000 4242 torch/_inductor/cudagraph_utils.py:401] [0/0] skipping cudagraphs due to "
        "mutated inputs (2 instances). Found from :",
        "W1201 05:00:00.123000 4242 torch/_inductor/utils.py:1804] [0/0] Not enough SMs to use max_autotune_gemm mode",
    ],
)
def test_inductors_cudagraph_and_max_autotune_notices_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


def test_a_triton_out_of_resources_inside_an_inductor_error_stays_the_compile_family(tmp_path):
    line = (
        "torch._inductor.exc.InductorError: OutOfResources: out of resource: triton_tem_fused_mm_0 Required: "
        "147456 Hardware limit:101376 Reducing block sizes or `num_stages` may help."
    )
    assert answer(tmp_path, line + "\n") == ("torch_compile_failed", CRASH, APP, STOP)


def test_tritons_missing_libcuda_is_the_nodes_driver_setup(tmp_path):
    """backends/nvidia/driver.py libcuda_dirs(): "libcuda.so cannot found! ... Please make sure GPU is set up and
    then run "/sbin/ldconfig"": the node's (or the container runtime's) driver library, not the program."""
    text = (
        "AssertionError: libcuda.so cannot found!\n"
        'Please make sure GPU is set up and then run "/sbin/ldconfig" (requires sudo) to refresh the linker cache.\n'
    )
    assert answer(tmp_path, text) == ("gpu_driver_unusable", CRASH, SYS, STOP)


def test_a_missing_c_compiler_for_tritons_launcher_is_the_images(tmp_path):
    line = (
        "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
        "triton.knobs.build.impl."
    )
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


# ------------------------------------------------------------------------------------------------ ptxas, NVRTC


@pytest.mark.parametrize(
    "line",
    [
        "ptxas fatal   : Ptx assembly aborted due to errors",
        "ptxas fatal   : Unresolved extern function '_Z3fooi'",
        "ptxas fatal   : Unsupported .version 8.7; current version is '8.4'",
        "ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x12000 bytes, 0xc000 max)",
        "ptxas /tmp/tmpabc/kernel.ptx, line 12; error   : Insufficient registers (255) to compile instruction at "
        "line 12 in function kernel. Try to compile with register target of 256 or higher.",
    ],
)
def test_ptxas_rejecting_the_ptx_is_the_programs_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("gpu_kernel_compile_failed", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "ptxas info    : Used 64 registers, 384 bytes cmem[0]",
        "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90'",
        "ptxas warning : Registers are spilled to local memory in function 'kernel', 8 bytes spill stores, "
        "8 bytes spill loads",
    ],
)
def test_ptxas_info_and_warnings_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


@pytest.mark.parametrize(
    "line",
    [
        # transformer_engine common/util/logging.h NVTE_CHECK_NVRTC
        "RuntimeError: /opt/transformer_engine/common/util/rtc.cpp:235 in function compile: NVRTC Error: "
        "NVRTC_ERROR_COMPILATION",
        'cupy.cuda.compiler.CompileException: /tmp/tmpxyz/kern.cu(12): error: identifier "foo" is undefined',
        "numba.cuda.cudadrv.error.NvrtcCompilationError: NVRTC Compilation failure whilst compiling kernel:",
    ],
)
def test_an_nvrtc_compile_error_is_the_programs(tmp_path, line):
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


@pytest.mark.parametrize(
    "text",
    [
        # numba-cuda 0.30.4 cudadrv/driver.py DRIVER_NOT_FOUND_MSG and DRIVER_LOAD_ERROR_MSG
        "numba.cuda.cudadrv.error.CudaSupportError: \nCUDA driver library cannot be found.\n"
        "Ensure that a compatible NVIDIA driver is installed and available on your system path.\n",
        "numba.cuda.cudadrv.error.CudaSupportError: \nPossible CUDA driver libraries are found but error occurred "
        "during load:\nlibcuda.so.1: cannot open shared object file: No such file or directory\n",
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
        "insufficient for CUDA runtime version\n",
    ],
)
def test_a_driver_library_that_numba_or_cupy_cannot_use_is_the_nodes(tmp_path, text):
    assert answer(tmp_path, text) == ("gpu_driver_unusable", CRASH, SYS, STOP)


# ------------------------------------------------------------------------------ fused-attention and kernel libraries


@pytest.mark.parametrize(
    "line",
    [
        # flash-attn 2.8.3.post2 csrc/flash_attn/flash_api.cpp TORCH_CHECKs
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        "RuntimeError: FlashAttention forward only supports head dimension at most 256",
        "RuntimeError: FlashAttention only support fp16 and bf16 data type",
        "ImportError: /usr/local/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi",
        # xformers 0.0.35 ops/fmha/dispatch.py
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
        # transformer-engine 2.20.2 pytorch/quantization.py (asserted in fp8_autocast) and NVTE_CHECK_CUDNN_FE
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.",
        "RuntimeError: /opt/transformer_engine/common/fused_attn/fused_attn_f16_arbitrary_seqlen.cu:612 in function "
        "fused_attn_arbitrary_seqlen_fwd_impl: cuDNN Error: No valid engine configs for Matmul_MUL_ADD_Reduction_. "
        "For more information, enable cuDNN error logging by setting CUDNN_LOGERR_DBG=1 and "
        "CUDNN_LOGDEST_DBG=stderr in the environment.",
        "RuntimeError: torch.distributed must be initialized before using Userbuffers",
        # bitsandbytes 0.50.2 cextension.py
        "RuntimeError: No compatible CUDA binary found at /usr/lib/python3/site-packages/bitsandbytes/"
        "libbitsandbytes_cuda128.so",
        # liger-kernel 0.8.5, torchao 0.18.0
        "RuntimeError: CuTe DSL FLCE requires a Hopper (compute capability 9.0) GPU",
        "NotImplementedError: triton_weight_quantize_2d requires SM100+",
    ],
)
def test_an_unsupported_gpu_head_dim_dtype_or_build_of_a_kernel_library_is_the_programs(tmp_path, line):
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        # transformer-engine's backend selection falls back by itself
        "[INFO     | DotProductAttention]: No fused attention backend available; falling back to unfused attention.",
        "[DEBUG    | DotProductAttention]: Disabling FusedAttention for compute capability < sm80",
        "[INFO     | DotProductAttention]: Running with UnfusedDotProductAttention backend",
        # xformers _cpp_lib.py warns at import and runs its other operators
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
        # bitsandbytes cextension.py: a path note
        "The directory listed in your path is found to be non-existent: /usr/local/nvidia/lib64",
        # numba-cuda 0.30.4 dispatcher.py: warn(errors.NumbaPerformanceWarning(msg))
        "/usr/local/lib/python3.11/site-packages/numba/cuda/dispatcher.py:745: NumbaPerformanceWarning: Grid size 1 "
        "will likely result in GPU under-utilization due to low occupancy.",
        # apex amp/scaler.py: the fused unscale kernel is missing and the Python fallback is used
        "Warning:  multi_tensor_applier fused unscale kernel is unavailable, possibly because apex was installed "
        "without --cuda_ext --cpp_ext. Using Python fallback.  Original ImportError was: "
        "ModuleNotFoundError(\"No module named 'amp_C'\")",
        # liger-kernel 0.8.5 transformers/monkey_patch.py
        "WARNING:liger_kernel.transformers.monkey_patch:Qwen2VLForConditionalGeneration is not supported by Liger "
        "kernel.",
        # transformer-engine 2.20.2 attention/dot_product_attention/utils.py
        "[WARNING  | DotProductAttention]: flash-attn v3 may provide important feature support or performance "
        "improvement. Please install flash-attn v3 by ",
        # deepspeed 0.19.8 op_builder: the op-compatibility report at start-up (OpBuilder.warning)
        "\x1b[93m [WARNING] \x1b[0m async_io requires the dev libaio .so object and headers but these were not found.",
        "\x1b[93m [WARNING] \x1b[0m DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch "
        "was compiled with 12.4.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may "
        "result in unexpected behavior.",
        "WARNING[XFORMERS]: Need to compile C++ extensions to use all xFormers features.",
        # torchao 0.18.0 __init__.py: the C++ kernels are skipped, the Python paths run
        "WARNING:torchao:Skipping import of cpp extensions due to incompatible torch version. Please upgrade to "
        "torch >= 2.11.0 (found 2.10.0+cu128).",
        # deepspeed 0.19.8 op_builder/builder.py jit_load: the op was built and loaded
        "Time to load fused_adam op: 29.61 seconds",
    ],
)
def test_fused_kernel_fallbacks_and_import_warnings_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# --------------------------------------------------------------------------------------- DeepSpeed op builder


@pytest.mark.parametrize(
    "line",
    [
        "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
        "op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.1 does not "
        "match the version torch was compiled with 12.4, unable to compile cuda/cpp extensions without a matching "
        "cuda version.",
        "RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed.",
        "RuntimeError: Error building extension 'fused_adam'",
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
        "RuntimeError: DeepSpeed JIT builder for 'fused_adam' found no CUDA devices. Set TORCH_CUDA_ARCH_LIST or "
        "make GPUs visible.",
    ],
)
def test_an_op_that_cannot_be_built_is_the_images_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


def test_bitsandbytes_without_a_binary_for_the_cuda_version_is_the_images(tmp_path):
    """bitsandbytes 0.50.2 cextension.py: the RuntimeError's message starts on the line after its name."""
    text = (
        "RuntimeError: \n"
        "\U0001f6a8 CUDA VERSION MISMATCH \U0001f6a8\n"
        "Requested CUDA version:          130\n"
        "Detected PyTorch CUDA version:   128\n"
        "Available pre-compiled versions: \n  - 121\n  - 128\n\n"
        "Attempted to use bitsandbytes native library functionality but it's not available.\n\n"
        "Native code method attempted to call: lib.cquantize_blockwise_fp16_nf4()\n"
    )
    assert answer(tmp_path, text)[1:] == (CRASH, APP, STOP)


def test_userbuffers_without_peer_access_is_a_setting_to_change(tmp_path):
    """libtransformer_engine.so 2.20.2 (transformer-engine-cu12): the message itself advises single-GPU mode (the
    NVTE_ERROR prefix's file, line and function stand for any)."""
    line = (
        "RuntimeError: /opt/transformer_engine/common/comm_gemm_overlap/userbuffers/userbuffers-host.cpp:275 in "
        "function create_communicator_grouped2: No peer-to-peer access available between GPUs. This platform does "
        "not support the GPU-to-GPU communication required for multi-GPU userbuffers. Consider using single-GPU mode."
    )
    assert answer(tmp_path, line + "\n")[1:] == (CRASH, APP, STOP)


def test_an_accepted_cuda_version_difference_stays_no_failure(tmp_path):
    line = (
        "Installed CUDA version 12.1 does not match the version torch was compiled with 12.4 but since the APIs "
        "are compatible, accepting this combination"
    )
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------- loss scalers


@pytest.mark.parametrize(
    "line",
    [
        # apex amp/handle.py: the scaler skips the step and halves the scale by itself
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "[2026-12-01 05:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
        "step. Attempted loss scale: 65536, reducing to 32768",
    ],
)
def test_a_skipped_overflow_step_stays_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


def test_a_loss_scaler_at_its_minimum_is_numeric_instability(tmp_path):
    line = "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
    assert answer(tmp_path, line + "\n") == ("loss_scale_minimum", CRASH, APP, STOP)


# ------------------------------------------------------------------------------------------------ the prefilter


@pytest.mark.parametrize("signature_id", ["gpu_kernel_compile_failed", "gpu_driver_unusable", "triton_autotune_notes"])
def test_the_compiler_keywords_start_with_a_capital_so_the_prefilter_stops_nowhere_new(signature_id):
    """A keyword on a module path ("triton.runtime.errors.") or on ptxas's lower-case prefix would stop the
    prefilter at many positions of healthy lines (docs/adding-a-signature.md): the keywords are the exception
    class names and ptxas's own messages."""
    keywords = default_catalogue().get(signature_id).keywords
    assert all(k[0].isupper() for k in keywords), keywords
