"""The lab's buffers as arrays other libraries take without a copy: on the GPU through
__cuda_array_interface__ (version 3) and DLPack, on the host as numpy arrays."""
import ctypes

import numpy as np

_KDL_CUDA = 2  # DLDeviceType kDLCUDA
_KDL_FLOAT = 2  # DLDataTypeCode kDLFloat


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

_live = {}  # address of a DLManagedTensor not yet deleted -> what keeps its memory


@_DELETER
def _delete(managed):
    _live.pop(ctypes.addressof(managed.contents), None)


_CAPSULE_NAME = b"dltensor"
_pyapi = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_pyapi.PyCapsule_New.restype = ctypes.py_object
_pyapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_pyapi.PyCapsule_IsValid.restype = ctypes.c_int
_pyapi.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_pyapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule):
    # A capsule no consumer took still holds its tensor: delete it (a consumer renames it first).
    if _pyapi.PyCapsule_IsValid(capsule, _CAPSULE_NAME):
        address = _pyapi.PyCapsule_GetPointer(capsule, _CAPSULE_NAME)
        _live.pop(address, None)


_device_of_context = None


def _current_device():
    """The CUDA device current on this thread (the lab's, during a run)."""
    global _device_of_context
    if _device_of_context is None:
        _device_of_context = ctypes.CDLL("libcuda.so.1")
    device = ctypes.c_int(0)
    _device_of_context.cuCtxGetDevice(ctypes.byref(device))
    return device.value


class DeviceArray:
    """A row-major float32 matrix in the lab's device memory. torch.as_tensor, cupy.asarray and
    numba.cuda.as_cuda_array take it through __cuda_array_interface__; torch.from_dlpack and
    cupy.from_dlpack through DLPack. The lab's work is ordered on its stream, so the interface names
    no stream to wait for."""

    def __init__(self, pointer, rows, cols):
        self.ptr, self.shape = int(pointer or 0), (int(rows), int(cols))

    dtype = np.dtype(np.float32)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": "<f4", "data": (self.ptr, False), "version": 3, "strides": None,
                "stream": None}

    def __dlpack_device__(self):
        return (_KDL_CUDA, _current_device())

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("mmlab: the lab's buffers are shared, not copied")
        managed = _DLManagedTensor()
        shape = (ctypes.c_int64 * 2)(*self.shape)
        t = managed.dl_tensor
        t.data, t.ndim, t.strides, t.byte_offset = self.ptr, 2, None, 0
        t.device = _DLDevice(_KDL_CUDA, _current_device())
        t.dtype = _DLDataType(_KDL_FLOAT, 32, 1)
        t.shape = shape
        managed.deleter = _delete
        address = ctypes.addressof(managed)
        _live[address] = (managed, shape)
        return _pyapi.PyCapsule_New(address, _CAPSULE_NAME, _capsule_gone)

    def __repr__(self):
        return f"<mmlab.DeviceArray {self.shape[0]}x{self.shape[1]} float32 at 0x{self.ptr:x}>"


def host_array(pointer, rows, cols):
    """A numpy view of a host buffer (no copy)."""
    if not rows or not cols:
        return np.zeros((rows, cols), dtype=np.float32)
    return np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(rows, cols))
