"""Python functions that try to fool the lab (issue #60), each beside an honest twin, registered as lab
algorithms on import (tests/python/test_cheats.py runs them). The lab must fail every `pycheat_` row and
pass every `pyhonest_` one.

host (numpy arrays)
  pycheat_once          computes C on its first call for a problem only
  pycheat_zeros_after   computes on its first call, zeros C after
  pycheat_half          computes on its first call, half of C's rows after
  pycheat_stored        computes on its first call and keeps C; copies it on later calls
  pyhonest_plain        C = A B, every call
  pyhonest_through      A B into an array of its own, then copied into C, every call
GPU (torch; registered only where torch sees a GPU)
  pycheat_side_stream   torch.mm on a stream of its own, not joined
  pycheat_torch_stored  computes on its first call and keeps C; copies it on later calls
  pyhonest_fork_join    torch.mm on a stream of its own, joined both ways
"""
import numpy as np

import mmlab

HOST = ["pycheat_once", "pycheat_zeros_after", "pycheat_half", "pycheat_stored", "pyhonest_plain",
        "pyhonest_through"]
GPU = []

_calls = {}


def _first(who, a, b):
    """True on the first call of `who` for this problem."""
    key = (who, a.shape, b.shape)
    _calls[key] = _calls.get(key, 0) + 1
    return _calls[key] == 1


@mmlab.algorithm("pycheat_once", backend="host")
def once(a, b, c, *, params, stream):
    if _first("once", a, b):
        c[:] = a @ b


@mmlab.algorithm("pycheat_zeros_after", backend="host")
def zeros_after(a, b, c, *, params, stream):
    c[:] = a @ b if _first("zeros", a, b) else 0.0


@mmlab.algorithm("pycheat_half", backend="host")
def half(a, b, c, *, params, stream):
    rows = a.shape[0] if _first("half", a, b) else a.shape[0] // 2
    c[:rows] = a[:rows] @ b


_kept = {}


@mmlab.algorithm("pycheat_stored", backend="host")
def stored(a, b, c, *, params, stream):
    key = (c.__array_interface__["data"][0], c.shape)
    if key not in _kept:
        c[:] = a @ b
        _kept[key] = c.copy()
    else:
        c[:] = _kept[key]


@mmlab.algorithm("pyhonest_plain", backend="host")
def plain(a, b, c, *, params, stream):
    c[:] = a @ b


@mmlab.algorithm("pyhonest_through", backend="host")
def through(a, b, c, *, params, stream):
    mine = np.matmul(a, b)
    c[:] = mine


try:
    import torch
except ImportError:  # pragma: no cover - the CPU machines
    torch = None

if torch is not None and torch.cuda.is_available():
    GPU = ["pycheat_side_stream", "pycheat_torch_stored", "pyhonest_fork_join"]
    _side = torch.cuda.Stream()

    def _tensors(a, b, c):  # the lab's buffers, without a copy
        return torch.as_tensor(a), torch.as_tensor(b), torch.as_tensor(c)

    @mmlab.algorithm("pycheat_side_stream")
    def side_stream(a, b, c, *, params, stream):
        ta, tb, tc = _tensors(a, b, c)
        with torch.cuda.stream(_side):
            torch.mm(ta, tb, out=tc)

    _torch_kept = {}

    @mmlab.algorithm("pycheat_torch_stored")
    def torch_stored(a, b, c, *, params, stream):
        ta, tb, tc = _tensors(a, b, c)
        key = (tc.data_ptr(), tuple(tc.shape))
        if key not in _torch_kept:
            torch.mm(ta, tb, out=tc)
            _torch_kept[key] = tc.clone()
        else:
            tc.copy_(_torch_kept[key])

    @mmlab.algorithm("pyhonest_fork_join")
    def fork_join(a, b, c, *, params, stream):
        ta, tb, tc = _tensors(a, b, c)
        lab = torch.cuda.current_stream()
        _side.wait_stream(lab)
        with torch.cuda.stream(_side):
            torch.mm(ta, tb, out=tc)
        lab.wait_stream(_side)
