"""Recognition from the process and runtime layer's own message catalogues, ninth pass of issue 9: what the C
library (Debian libc6 2.36: malloc's and the stack protector's aborts, assert, strerror), the dynamic loader
(ld-linux-x86-64.so.2 of the same package), CPython 3.11 (libpython3.11 3.11.2: Py_FatalError's messages,
faulthandler, concurrent.futures and multiprocessing), the shells (bash 5.2.15 and dash 0.5.12: their reports of a
job a signal ended; zsh 5.9's were checked and left out) and coreutils 9.1's timeout print when a process dies.
Each line here is built from a format string of the installed binary (``strings``) or the standard library's
source, not copied from a corpus excerpt. Every family also pins lines that must stay "no failure": the software
prints them when it carries on, retries by itself, or has already finished."""

from __future__ import annotations

import pytest

from lazarus.detection.catalogue import default_catalogue
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import answer, diagnose_text, kind_of

CRASH, HANG, NONE = FailureKind.CRASH, FailureKind.HANG, FailureKind.NONE
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES
APP, INFRA, SYS, UNKNOWN = Category.APPLICATION, Category.INFRASTRUCTURE, Category.SYSTEM_SOFTWARE, Category.UNKNOWN

HEAP = ("heap_corruption", CRASH, SYS, SAME)
SCRIPT = "/var/spool/slurmd/job04242/slurm_script: line 12: 40112 "


# ------------------------------------------------------------------------------------ glibc 2.36: malloc, SSP


@pytest.mark.parametrize(
    "line",
    [
        # malloc_printerr's texts (strings of libc.so.6), each printed just before abort()
        "free(): double free detected in tcache 2",
        "free(): corrupted unsorted chunks",
        "free(): unaligned chunk detected in tcache 2",
        "malloc(): corrupted top size",
        "malloc(): unaligned tcache chunk detected",
        "malloc(): memory corruption (fast)",
        "malloc(): unsorted double linked list corrupted",
        "malloc(): mismatching next->prev_size (unsorted)",
        "malloc_consolidate(): invalid chunk size",
        "munmap_chunk(): invalid pointer",
        "realloc(): invalid next size",
        "corrupted size vs. prev_size while consolidating",
        "corrupted double-linked list",
        "Fatal glibc error: malloc assertion failure in sysmalloc: (old_top == initial_top (av) && old_size == 0)",
        # the stack protector's and _FORTIFY_SOURCE's "*** %s ***: terminated"
        "*** stack smashing detected ***: terminated",
        "*** buffer overflow detected ***: terminated",
        "*** longjmp causes uninitialized stack frame ***: terminated",
    ],
)
def test_the_c_librarys_heap_and_stack_corruption_aborts_are_heap_corruption(tmp_path, line):
    assert answer(tmp_path, line + "\n") == HEAP


@pytest.mark.parametrize(
    "line",
    [
        # glibc's __assert_fail: "%s%s%s:%u: %s%sAssertion `%s' failed."
        "python: ../csrc/engine.cpp:412: void Engine::step(int): Assertion `n > 0' failed.",
        "trainer: src/comm.c:88: comm_init: Assertion `rank < world_size' failed.",
        # ld.so's own: "Inconsistency detected by ld.so: %s: %u: %s%sAssertion `%s' failed!"
        "Inconsistency detected by ld.so: dl-open.c: 930: _dl_open: Assertion `_dl_debug_update (args.nsid)->r_state "
        "== RT_CONSISTENT' failed!",
        "Fatal glibc error: array index 7 not less than array length 4",
    ],
)
def test_a_native_assertion_that_failed_is_the_programs_own_stop(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("native_assertion_failed", CRASH, APP, STOP)


def test_a_cuda_device_assert_stays_a_device_assert_not_a_c_library_assert(tmp_path):
    line = (
        "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [3,0,0], thread: [64,0,0] "
        'Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.'
    )
    assert answer(tmp_path, line + "\n")[0] == "cuda_device_assert"


def test_an_assertion_wins_over_the_abort_it_causes(tmp_path):
    log = "python: ../csrc/engine.cpp:412: void Engine::step(int): Assertion `n > 0' failed.\nAborted (core dumped)\n"
    assert answer(tmp_path, log)[0] == "native_assertion_failed"


@pytest.mark.parametrize(
    "line",
    [
        "Assertion checks enabled: TORCH_SHOW_CPP_STACKTRACES=1",
        "malloc(): requested 4096 bytes from the arena",
        "INFO: *** stack usage 12 MiB ***",
    ],
)
def test_lines_that_only_mention_malloc_or_an_assertion_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# -------------------------------------------------------------------------------------- the dynamic loader


@pytest.mark.parametrize(
    "line",
    [
        # "%s: error while loading shared libraries: %s: %s"
        "python: error while loading shared libraries: libcudart.so.12: cannot open shared object file: "
        "No such file or directory",
        "/opt/bin/trainer: error while loading shared libraries: libmpi.so.40: wrong ELF class: ELFCLASS32",
        # "symbol lookup error", "undefined symbol: %s%s%s"
        "/opt/bin/trainer: symbol lookup error: /opt/lib/libfoo.so: undefined symbol: ncclCommInitRankConfig",
        # "version `%s' not found (required by %s)"
        "/opt/bin/trainer: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by /opt/bin/trainer)",
        "/usr/bin/python3: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
        "(required by /opt/conda/lib/libtorch_cpu.so)",
        "OSError: /opt/lib/libgomp.so.1: cannot allocate memory in static TLS block",
    ],
)
def test_a_library_the_loader_cannot_load_is_an_environment_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("shared_library_unloadable", CRASH, APP, STOP)


def test_an_ld_preload_object_the_loader_ignores_is_no_failure(tmp_path):
    line = (
        "ERROR: ld.so: object '/usr/lib/libjemalloc.so' from LD_PRELOAD cannot be preloaded "
        "(cannot open shared object file): ignored."
    )
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------- CPython 3.11


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Py_FatalError's "Fatal Python error: <function>: <message>"
        (
            "Fatal Python error: PyThreadState_Get: the function must be called with the GIL held, but the GIL is "
            "released (the current Python thread state is NULL)",
            ("python_fatal_error", CRASH, APP, STOP),
        ),
        (
            "Fatal Python error: _PyMem_DebugMalloc: Python memory allocator called without holding the GIL",
            ("python_fatal_error", CRASH, APP, STOP),
        ),
        (
            "Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow.",
            ("python_fatal_error", CRASH, APP, STOP),
        ),
        (
            "Fatal Python error: _PyObject_GC_TRACK: object already tracked by the garbage collector",
            ("python_fatal_error", CRASH, APP, STOP),
        ),
        (
            "Fatal Python error: init_import_site: Failed to import the site module",
            ("python_startup_failed", CRASH, APP, STOP),
        ),
        (
            "Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
            ("python_startup_failed", CRASH, APP, STOP),
        ),
        # faulthandler's signal forms join the signal families
        (
            "Fatal Python error: Floating point exception",
            ("process_fpe_or_illegal_instruction", CRASH, APP, STOP),
        ),
        ("Fatal Python error: Illegal instruction", ("process_fpe_or_illegal_instruction", CRASH, APP, STOP)),
        # faulthandler.dump_traceback_later's header: "Timeout (%lu:%02lu:%02lu)!"
        ("Timeout (0:30:00)!", ("generic_timeout_hang", HANG, UNKNOWN, SAME)),
    ],
)
def test_cpythons_own_fatal_errors_are_read_by_what_broke(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        # a daemon thread held stderr's lock while the interpreter shut down: the program had already finished
        "Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stderr>'> "
        "at interpreter shutdown, possibly due to daemon threads",
        "Python runtime state: initialized",
        "Current thread 0x00007f3b2c1d4740 (most recent call first):",
        "Extension modules: numpy.core._multiarray_umath, torch._C (total: 12)",
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f3b2c1d4e50>",
        "Exception ignored in atexit callback: <function _exit_function at 0x7f3b2c1d4e50>",
    ],
)
def test_cpythons_shutdown_notes_and_dump_headers_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


IGNORED = (
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f3b2c1d4e50>\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1479, in __del__\n'
    "    self._shutdown_workers()\n"
    "AttributeError: 'NoneType' object has no attribute 'python_exit_status'\n"
)


def test_the_traceback_of_an_exception_cpython_ignored_ends_nothing(tmp_path):
    """PyErr_WriteUnraisable's "Exception ignored in: <obj>" and the traceback after it: the program went on."""
    log = "step 100 loss 1.23\nTraining finished.\n" + IGNORED
    assert diagnose_text(tmp_path, log).failure_kind is NONE


def test_an_exception_after_the_ignored_one_is_still_read(tmp_path):
    log = IGNORED + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nKeyError: 'labels'\n"
    assert answer(tmp_path, log) == ("python_exception", CRASH, APP, STOP)


def test_a_specific_failure_inside_an_ignored_traceback_still_counts(tmp_path):
    log = (
        "Exception ignored in: <function Engine.__del__ at 0x7f3b2c1d4e50>\n"
        "Traceback (most recent call last):\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    assert answer(tmp_path, log)[0] == "cuda_illegal_address"


# ------------------------------------------------------------------- concurrent.futures and multiprocessing


@pytest.mark.parametrize(
    "line",
    [
        # Lib/concurrent/futures/process.py and thread.py (3.11)
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
        "the future was running or pending.",
        "concurrent.futures.process.BrokenProcessPool: A child process terminated abruptly, the process pool is not "
        "usable anymore",
        "concurrent.futures.thread.BrokenThreadPool: A thread initializer failed, the thread pool is not usable anymore",
    ],
)
def test_a_broken_process_pool_is_a_worker_that_died_a_victim_of_the_jobs_own_memory_or_code(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("process_pool_broken", CRASH, APP, STOP)


def test_a_signal_line_beside_a_broken_pool_is_the_cause(tmp_path):
    log = (
        "/var/spool/slurmd/job04242/slurm_script: line 12: 40112 Segmentation fault      (core dumped) python a.py\n"
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly "
        "while the future was running or pending.\n"
    )
    assert answer(tmp_path, log)[0] == "process_segfault"


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        # Lib/multiprocessing/process.py's repr: "exitcode=%s" with the signal's name for a negative code
        ("<Process name='Process-3' pid=4242 parent=4100 stopped exitcode=-SIGKILL>", "process_killed_sigkill"),
        ("<Process name='Process-3' pid=4242 parent=4100 stopped exitcode=-SIGABRT>", "process_aborted"),
    ],
)
def test_a_multiprocessing_child_that_a_signal_ended_is_read_by_its_signal(tmp_path, line, signature):
    assert answer(tmp_path, line + "\n")[0] == signature


def test_the_resource_trackers_leak_warning_at_shutdown_stays_no_failure(tmp_path):
    line = (
        "/usr/lib/python3.11/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear "
        "to be 6 leaked semaphore objects to clean up at shutdown"
    )
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------- the shells' job reports


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # bash 5.2: "%s: line %d: " then "%5ld %s" with strsignal's text (libc6 2.36) and the command
        (SCRIPT + "Aborted                 (core dumped) python train.py", ("process_aborted", CRASH, UNKNOWN, SAME)),
        (
            SCRIPT + "Illegal instruction     (core dumped) python train.py",
            ("process_fpe_or_illegal_instruction", CRASH, APP, STOP),
        ),
        (
            SCRIPT + "Floating point exception(core dumped) python train.py",
            ("process_fpe_or_illegal_instruction", CRASH, APP, STOP),
        ),
        (SCRIPT + "Terminated              python train.py", ("generic_external_signal", CRASH, UNKNOWN, SAME)),
        (SCRIPT + "Hangup                  python train.py", ("generic_external_signal", CRASH, UNKNOWN, SAME)),
        # dash's bare status line
        ("Aborted", ("process_aborted", CRASH, UNKNOWN, SAME)),
        ("Hangup", ("generic_external_signal", CRASH, UNKNOWN, SAME)),
    ],
)
def test_a_shells_report_of_a_job_a_signal_ended_is_read_by_that_signal(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        SCRIPT + "CPU time limit exceeded (core dumped) python train.py",
        SCRIPT + "File size limit exceeded(core dumped) python train.py",
        "OSError: [Errno 27] File too large: '/scratch/out.bin'",
        "bash: fork: Resource temporarily unavailable",
    ],
)
def test_a_process_stopped_at_a_limit_set_for_it_is_stopped_until_the_limit_or_the_job_changes(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("process_resource_limit", CRASH, APP, STOP)


@pytest.mark.parametrize(
    "line",
    [
        "/var/spool/slurmd/job04242/slurm_script: line 9: torchrun: command not found",
        "/bin/sh: 1: python: not found",
        "bash: /opt/bin/trainer: cannot execute binary file: Exec format error",
        "bash: ./run_train.sh: cannot execute: required file not found",
    ],
)
def test_a_program_the_shell_cannot_find_or_run_is_a_launch_to_fix(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("shell_command_not_found", CRASH, APP, STOP)


def test_a_missing_helper_command_never_outranks_a_failure_the_log_reports(tmp_path):
    log = "bash: nvidia-smi: command not found\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert answer(tmp_path, log)[0] == "cuda_illegal_address"


@pytest.mark.parametrize(
    "line",
    [
        # bash retries fork by itself; "Done" and "User defined signal 1" end nothing
        "bash: fork: retry: Resource temporarily unavailable",
        "run.sh: line 7: 40112 Done                    python train.py",
        SCRIPT + "User defined signal 1   python train.py",
    ],
)
def test_a_shell_line_that_ends_nothing_stays_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


@pytest.mark.parametrize(
    "line",
    [
        # zsh 5.9's lower-case signal names: checked, left out (docs/benchmarks.md, ninth pass): no keyword that
        # starts with a capital or punctuation reads them, and "zsh: " made the prefilter stop at every "z"
        "zsh: killed     python train.py",
        "zsh: IOT instruction (core dumped)  python train.py",
        "zsh: terminated  python train.py",
    ],
)
def test_zshs_lower_case_job_reports_are_left_to_the_lines_around_them(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# --------------------------------------------------------------------------- coreutils 9.1 timeout


@pytest.mark.parametrize(
    "line",
    ["srun: error: node07: task 0: Exited with exit code 124", "Command exited with exit code 124"],
)
def test_timeouts_exit_status_124_is_a_hang_the_script_ended(tmp_path, line):
    assert answer(tmp_path, line + "\n") == ("generic_timeout_hang", HANG, UNKNOWN, SAME)


def test_other_exit_statuses_say_nothing_of_the_cause(tmp_path):
    assert kind_of(tmp_path, "srun: error: node07: task 0: Exited with exit code 1") is NONE


# ------------------------------------------------------------------------------ errno texts (strerror)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # EMFILE: the process's own descriptor limit; ENFILE: the node's file table
        ("OSError: [Errno 24] Too many open files: '/data/shard-0001.bin'", ("open_file_limit", CRASH, APP, STOP)),
        ("open(/data/x): Too many open files", ("open_file_limit", CRASH, APP, STOP)),
        ("socket: Too many open files in system", ("system_file_table_full", CRASH, SYS, SAME)),
        # EUCLEAN, EREMOTEIO and EROFS: the file system failed under the program
        ("cp: error reading '/lustre/x': Structure needs cleaning", ("storage_io_exception", CRASH, INFRA, SAME)),
        ("OSError: [Errno 121] Remote I/O error", ("storage_io_exception", CRASH, INFRA, SAME)),
        ("tee: /ckpt/log.txt: Read-only file system", ("storage_io_exception", CRASH, INFRA, SAME)),
        # ENOMEM where a process is created
        ("bash: fork: Cannot allocate memory", ("host_oom_invoked", CRASH, APP, STOP)),
    ],
)
def test_an_errno_in_a_fatal_line_is_read_by_what_it_means(tmp_path, line, expected):
    assert answer(tmp_path, line + "\n") == expected


@pytest.mark.parametrize(
    "line",
    [
        "ulimit -n: 1048576 (soft)",
        "INFO: raising the open files limit to 65536",
        "mount: /scratch mounted read-only file system check skipped",
    ],
)
def test_lines_about_limits_and_mounts_that_report_no_error_stay_no_failure(tmp_path, line):
    assert kind_of(tmp_path, line) is NONE


# ------------------------------------------------------------------------------------------ the prefilter

NEW = (
    "native_assertion_failed",
    "shared_library_unloadable",
    "python_startup_failed",
    "python_fatal_error",
    "process_pool_broken",
    "process_resource_limit",
    "open_file_limit",
    "system_file_table_full",
    "shell_command_not_found",
    "process_runtime_note",
    "python_unraisable_exception",
)


@pytest.mark.parametrize("signature_id", NEW)
def test_the_process_layer_keywords_start_where_the_prefilter_already_stops(signature_id):
    """A keyword starting with a common lower-case letter makes the prefilter stop at many positions of healthy
    lines (docs/adding-a-signature.md); these start with a capital or punctuation."""
    keywords = default_catalogue().get(signature_id).keywords
    assert all(k[0].isupper() or not k[0].isalnum() for k in keywords), keywords
