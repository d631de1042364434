"""Device arrays for the GPU pipeline: CuPy on a real GPU, numpy under the CUDA simulator.

The GPU steps mix numba.cuda kernels with array primitives (CUB radix sort, scans, gathers). On a GPU
those primitives come from CuPy, whose arrays pass to numba kernels without a copy
(``__cuda_array_interface__``). Under ``NUMBA_ENABLE_CUDASIM=1`` the same code runs with numpy arrays
and the simulator's kernels, so the whole device path can be exercised on a machine without a GPU.
"""

from __future__ import annotations

import ctypes

import numba
import numpy as np
from numba import config as numba_config
from numba import cuda

SIMULATED = bool(numba_config.ENABLE_CUDASIM)
SM_COUNT = 132                  # launch shapes are sized for an H100/H200; grid-stride loops cover the rest
SIMULATED_BLOCKS = 2            # the simulator runs a Python thread per CUDA thread: keep grids tiny
# Decorator of every kernel: compiled once per machine and kept in numba's on-disk cache (the package's
# __pycache__, else NUMBA_CACHE_DIR or the user's cache folder), so a command does not spend its first
# seconds compiling. A kernel's cache entry is renewed when its own source file changes.
cached_kernel = cuda.jit(cache=True)


def xp():
    """The array module of the device: ``cupy``, or ``numpy`` under the simulator."""
    if SIMULATED:
        return np
    import cupy

    return cupy


def to_host(array) -> np.ndarray:
    """A device array (CuPy, numba or numpy) as a numpy array."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get"):
        return array.get()
    return array.copy_to_host()


STAGE_BYTES = 1 << 25  # uploads cross in pieces of this size, through two pinned buffers of this size: large
# enough that the per-piece costs (a synchronisation, the cores' copy starting) leave the DMA near its rate
STAGE_MIN = 1 << 20    # smaller uploads go straight from pageable memory (cupy.asarray)
_STAGING: list = []


@numba.njit(parallel=True, cache=True)
def _copy_bytes(source, target):
    """target[:] = source[:] (uint8), split over the CPU's cores."""
    pieces = 64
    size = source.shape[0]
    for piece in numba.prange(pieces):
        target[piece * size // pieces:(piece + 1) * size // pieces] = source[piece * size // pieces:
                                                                            (piece + 1) * size // pieces]


def prepare_uploads() -> None:
    """Allocate the pinned staging buffers of :func:`to_device` (page-locking takes about 0.6 s per GB, so
    this is done once, at warm-up) and compile their copy."""
    if SIMULATED or _STAGING:
        return
    import cupy

    for _ in range(2):
        memory = cupy.cuda.alloc_pinned_memory(STAGE_BYTES)
        _STAGING.append((memory, np.frombuffer(memory, dtype=np.uint8, count=STAGE_BYTES), cupy.cuda.Event()))
    _copy_bytes(np.zeros(64, dtype=np.uint8), _STAGING[0][1][:64])


def to_device(array):
    """A host array on the device (one copy). An array of more than STAGE_MIN bytes goes in pieces through two
    pinned buffers, filled by all cores while the other one's piece crosses: copies from pinned memory are many
    times faster than from pageable memory."""
    if SIMULATED:
        return np.ascontiguousarray(array)
    import cupy

    array = np.ascontiguousarray(array)
    if array.nbytes <= STAGE_MIN:
        return cupy.asarray(array)
    prepare_uploads()
    result = cupy.empty(array.shape, dtype=array.dtype)
    source = array.reshape(-1).view(np.uint8)
    stream = cupy.cuda.get_current_stream()
    for index, start in enumerate(range(0, array.nbytes, STAGE_BYTES)):
        memory, staged, done = _STAGING[index % 2]
        done.synchronize()  # the piece last staged here has crossed
        stop = min(start + STAGE_BYTES, array.nbytes)
        _copy_bytes(source[start:stop], staged[:stop - start])
        cupy.cuda.runtime.memcpyAsync(result.data.ptr + start, memory.ptr, stop - start,
                                      cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
        done.record(stream)
    stream.synchronize()
    return result


def kernel_view(array):
    """A view numba kernels take without per-launch conversion or stream synchronisation."""
    if SIMULATED or array is None:
        return array
    from numba import cuda

    return cuda.as_cuda_array(array, sync=False)


def launch(kernel, shape, *arguments) -> None:
    """``kernel[shape](*arguments)`` (``shape``: (blocks, threads) or (blocks, threads, 0, shared bytes)) for
    CuPy arrays, numba device arrays and host scalars, at a fraction of numba's cost.

    numba's dispatcher types every argument at each launch and converts each CuPy array into a numba
    array, with a synchronisation of the stream, which costs several times the launch itself. The first
    launch of a kernel with a given kind of arguments (dtype and dimensions of C-ordered arrays, the type
    of scalars) goes through numba, which compiles the kernel or finds it; later ones pack the arguments as
    numba's ``_Kernel.launch`` does and launch that compiled kernel directly. Arguments of other kinds
    (arrays not in C order, host arrays) always go through numba."""
    key, parameters = (None, None) if SIMULATED else _pack(kernel, arguments)
    handle = _LAUNCHERS.get(key) if key is not None else None
    if handle:
        blocks, threads, *rest = shape
        configuration = (blocks, threads, rest[1] if rest else 0)
        config = _LAUNCH_CONFIGS.get(configuration)
        if config is None:
            config = _LAUNCH_CONFIGS[configuration] = _CORE[1](grid=blocks, block=threads,
                                                               shmem_size=configuration[2])
        _CORE[0](_CORE[2], config, handle, *parameters)
        return
    kernel[shape](*[_as_numba(argument) for argument in arguments])
    if key is not None and key not in _LAUNCHERS:
        _LAUNCHERS[key] = _compiled_handle(kernel, arguments)


# The scalars numba types by their Python type (numba.cuda's typeof: int -> int64, float -> float64) and the
# ctypes type its _Kernel.launch passes each as; booleans pass as they are.
_SCALAR_PACKERS = {int: ctypes.c_int64, float: ctypes.c_double, bool: None, np.int64: ctypes.c_int64,
                   np.int32: ctypes.c_int32, np.float64: ctypes.c_double, np.uint64: ctypes.c_uint64}
_LAUNCHERS: dict = {}    # (kernel, argument kinds) -> the compiled kernel's handle, or False: numba launches
_LAUNCH_CONFIGS: dict = {}
_CORE: list = []         # cuda.core's launch, its LaunchConfig and numba's default stream, once


def _pack(kernel, arguments):
    """(key, parameters): the kinds of ``arguments`` as numba types them, with ``kernel``, and the values
    numba's ``_Kernel.launch`` passes for them; (None, None) when an argument is not one :func:`launch`
    packs. CuPy arrays, the common case, are read from their attributes: their ``__cuda_array_interface__``
    builds a dict at each access, and costs more than the launch."""
    kinds, parameters = [kernel], []
    cupy_array = _cupy_array_type()
    for argument in arguments:
        if type(argument) is cupy_array:
            shape, itemsize = argument.shape, argument.itemsize
            strides = _c_strides(shape, itemsize)
            if argument.strides != strides and not _c_contiguous(shape, argument.strides, itemsize):
                return None, None
            kinds.append((argument.dtype, len(shape)))
            parameters.extend((0, 0, argument.size, itemsize, argument.data.ptr, *shape, *strides))
            continue
        packer = _SCALAR_PACKERS.get(type(argument), _SCALAR_PACKERS)
        if packer is not _SCALAR_PACKERS:
            if type(argument) is int and not -2**63 <= argument < 2**63:
                return None, None  # numba types it uint64 (or fails): its own launch decides
            kinds.append(type(argument))
            parameters.append(argument if packer is None else packer(argument))
            continue
        packed = _array_parameters(argument) if hasattr(argument, "__cuda_array_interface__") else None
        if packed is None:
            return None, None
        kinds.append(packed[0])
        parameters.extend(packed[1])
    return tuple(kinds), parameters


_CUPY_ARRAY: list = []  # cupy.ndarray once looked up (a type no argument has where CuPy is missing)


def _cupy_array_type():
    """``cupy.ndarray``, looked up once."""
    if not _CUPY_ARRAY:
        try:
            import cupy

            _CUPY_ARRAY.append(cupy.ndarray)
        except ImportError:
            _CUPY_ARRAY.append(type("NoCupyArray", (), {}))
    return _CUPY_ARRAY[0]


def _array_parameters(argument):
    """(kind, parameters) of a C-ordered device array given by its CUDA array interface: the kind numba's
    typing sees (dtype, dimensions) and the values its ``_Kernel.launch`` passes (meminfo, parent, size,
    itemsize, data pointer, shape, strides in bytes); None when the array is not C-ordered (numba types it
    differently)."""
    interface = argument.__cuda_array_interface__
    shape = tuple(interface["shape"])
    dtype = np.dtype(interface["typestr"])
    if interface.get("strides") is not None and interface["strides"] != _c_strides(shape, dtype.itemsize):
        return None
    pointer = interface["data"][0] or 0
    size = 1
    for extent in shape:
        size *= extent
    return (dtype, len(shape)), (0, 0, size, dtype.itemsize, pointer, *shape, *_c_strides(shape, dtype.itemsize))


def _c_strides(shape, itemsize: int) -> tuple:
    if len(shape) == 1:
        return (itemsize,)
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _c_contiguous(shape, strides, itemsize: int) -> bool:
    """Whether an array is in C order as CuPy's flag says: strides of extents of 1 do not count, nor any of an
    empty array."""
    if 0 in shape:
        return True
    step = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != step:
            return False
        step *= extent
    return True


def _compiled_handle(kernel, arguments):
    """The handle of the kernel numba compiled for ``arguments`` (just launched through numba), or False when
    it cannot be had from this numba (its internals are not an API): numba then launches it every time."""
    try:
        if not _CORE:
            from cuda.core import LaunchConfig
            from cuda.core import launch as core_launch
            from numba.cuda.cudadrv import driver

            _CORE.extend((core_launch, LaunchConfig, driver._to_core_stream(0)))
        compiled = kernel.overloads.get(_numba_types(kernel, arguments))
        if compiled is None or compiled.debug or compiled.cooperative or kernel.specialized:
            return False
        return compiled._codelibrary.get_cufunc().kernel
    except Exception:  # noqa: BLE001 - any change in numba's internals: numba launches, as before
        return False


def _numba_types(kernel, arguments) -> tuple:
    """The numba types of ``arguments`` as ``kernel`` (a numba.cuda dispatcher) sees them at a launch."""
    return tuple(kernel.typeof_pyval(_as_numba(argument)) for argument in arguments)


def _is_cupy(argument) -> bool:
    return type(argument) is _cupy_array_type()


def _as_numba(argument):
    """A CuPy array as a numba view (:func:`kernel_view`); anything else as it is."""
    return kernel_view(argument) if _is_cupy(argument) else argument


def grid(count: int, threads: int = 256, blocks_per_sm: int = 16) -> tuple[int, int]:
    """(blocks, threads) for a grid-stride kernel over ``count`` items."""
    if SIMULATED:
        return SIMULATED_BLOCKS, 32
    return max(1, min((count + threads - 1) // threads, SM_COUNT * blocks_per_sm)), threads


_DYNAMIC_SHARED_ALLOWED: dict = {}


def allow_dynamic_shared(kernel, arguments, nbytes: int) -> None:
    """Let ``kernel`` (a numba.cuda dispatcher), specialised for ``arguments``, launch with ``nbytes`` of
    dynamic shared memory, above the 48 KB a launch gets without opting in (H100: up to 227 KB per block,
    static included): compiles it and sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, as numba's own
    shared_memory_carveout option sets its attribute. The limit only ever grows (a launch with less than
    the limit is valid; lowering it would fail later launches that need more); no-op in the simulator."""
    if SIMULATED or nbytes <= 48 * 1024:
        return
    from numba.cuda.cudadrv.driver import binding, driver

    types = _numba_types(kernel, arguments)
    if _DYNAMIC_SHARED_ALLOWED.get((kernel, types), 0) >= nbytes:
        return
    function = kernel.compile(types)._codelibrary.get_cufunc()
    attribute = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    driver.cuKernelSetAttribute(attribute, nbytes, function.handle, function.device.id)
    _DYNAMIC_SHARED_ALLOWED[(kernel, types)] = nbytes


def scalar(array, index: int = 0) -> int:
    """One element of a device array on the host (a synchronising copy)."""
    return int(to_host(array[index:index + 1])[0])


def count_nonzero(array) -> int:
    """How many elements of a device array are non-zero, on the host."""
    return int(xp().count_nonzero(array))


_PEAK = [0]  # the most bytes CuPy's arrays held at once since reset_device_memory_peak
_TRACKING: list = []


def _tracking_malloc(size: int):
    """CuPy's pool allocation, noting the bytes in use after it (the peak is always right after one)."""
    pool = _TRACKING[0]
    memory = pool.malloc(size)
    used = pool.used_bytes()
    if used > _PEAK[0]:
        _PEAK[0] = used
    return memory


def reset_device_memory_peak() -> None:
    """Measure :func:`device_memory_peak` from here: the bytes CuPy's arrays use now. The pool keeps its cached
    blocks: returning them would make every allocation of the next partition a cudaMalloc."""
    if SIMULATED:
        return
    cupy = xp()
    if not _TRACKING:
        _TRACKING.append(cupy.get_default_memory_pool())
        cupy.cuda.set_allocator(_tracking_malloc)
    _PEAK[0] = _TRACKING[0].used_bytes()


def device_memory_peak() -> int:
    """The most bytes CuPy's arrays held at once since :func:`reset_device_memory_peak` (numba's own
    allocations, a few scalars, not included). 0 under the simulator."""
    return 0 if SIMULATED else int(_PEAK[0])


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says the device ran out of memory (CuPy's OutOfMemoryError, or a CUDA driver error
    CUDA_ERROR_OUT_OF_MEMORY raised through numba)."""
    return type(error).__name__ == "OutOfMemoryError" or "OUT_OF_MEMORY" in str(error)


def free_device_bytes() -> int | None:
    """Free device memory in bytes plus what CuPy's pool holds unused, or None under the simulator."""
    if SIMULATED:
        return None
    from numba import cuda

    free, _ = cuda.current_context().get_memory_info()
    pool = xp().get_default_memory_pool()
    return int(free) + int(pool.total_bytes() - pool.used_bytes())
