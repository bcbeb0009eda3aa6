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
  pycheat_poison_aware  computes only when C[0] holds the verification's poison (numpy's NaN)
  pyhonest_reads_c      looks at C[0] the same way, then computes every call
host, issue #81 (answers from memory; run on shapes whose products take 0.05 ms or more)
  pycheat_memo          keeps its last four products by a signature of 64 sampled entries of A and B; where a
                        call's signature is one of them, copies that C in
  pyhonest_memo         the same signatures and kept products, the product every call
GPU (torch; registered only where torch sees a GPU)
  pycheat_side_stream   torch.mm on a stream of its own, not joined
  pycheat_torch_stored  computes on its first call and keeps C; copies it on later calls
  pyhonest_fork_join    torch.mm on a stream of its own, joined both ways
  pycheat_tf32          torch.mm with TF32 tensor cores allowed, under an FP32 name
  pyhonest_torch        torch.mm in FP32 (TF32 not allowed) on the lab's stream
GPU, issue #81 (torch; shapes whose products take 0.05 ms or more)
  pycheat_torch_memo    keeps its last four products by 64 entries of A and B gathered on the GPU; where a
                        call's are one of those, copies that C in
  pyhonest_torch_memo   the same gathers and kept products, torch.mm every call
"""
import numpy as np

import mmlab

HOST = ["pycheat_once", "pycheat_zeros_after", "pycheat_half", "pycheat_stored", "pyhonest_plain",
        "pyhonest_through", "pycheat_poison_aware", "pyhonest_reads_c"]
MEMO = ["pycheat_memo", "pyhonest_memo"]
GPU = []
GPU_MEMO = []

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


_memo = {}


def _signature(a, b):
    """64 sampled entries of A and B (at places fixed by their sizes), as bytes."""
    places = np.random.default_rng(81).integers(0, 1 << 62, 64)
    return np.concatenate([a.reshape(-1)[places[:32] % max(a.size, 1)],
                           b.reshape(-1)[places[32:] % max(b.size, 1)]]).tobytes()


def _memoised(who, a, b, c, cheat):
    """A cache of the last four products by their inputs' signature (the least recently used goes)."""
    import collections
    cache = _memo.setdefault((who, a.shape, b.shape), collections.OrderedDict())
    now = _signature(a, b)
    if now in cache:
        cache.move_to_end(now)
        if cheat:
            c[:] = cache[now]
            return
    c[:] = a @ b
    cache[now] = c.copy()
    while len(cache) > 4:
        cache.popitem(last=False)


@mmlab.algorithm("pycheat_memo", backend="host")
def memo(a, b, c, *, params, stream):
    _memoised("pycheat_memo", a, b, c, True)


@mmlab.algorithm("pyhonest_memo", backend="host")
def memo_honest(a, b, c, *, params, stream):
    _memoised("pyhonest_memo", a, b, c, False)


_VERIFICATION_POISON = np.array([np.nan], dtype=np.float32).view(np.uint32)[0]  # 0x7FC00000


def _judged(c):
    """C[0] holds the verification's poison: the call is the one the lab judges (or so a cheat hopes)."""
    return c.reshape(-1)[:1].view(np.uint32)[0] == _VERIFICATION_POISON


@mmlab.algorithm("pycheat_poison_aware", backend="host")
def poison_aware(a, b, c, *, params, stream):
    if _judged(c):
        c[:] = a @ b


@mmlab.algorithm("pyhonest_reads_c", backend="host")
def reads_c(a, b, c, *, params, stream):
    _judged(c)
    c[:] = a @ b


try:
    import torch
except ImportError:  # pragma: no cover - the CPU machines
    torch = None

if torch is not None and torch.cuda.is_available():
    GPU = ["pycheat_side_stream", "pycheat_torch_stored", "pyhonest_fork_join", "pycheat_tf32", "pyhonest_torch"]
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

    def _mm(a, b, c, tf32):
        """C = A B with TF32 tensor cores allowed or not, the setting put back after."""
        ta, tb, tc = _tensors(a, b, c)
        before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            torch.mm(ta, tb, out=tc)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before

    @mmlab.algorithm("pycheat_tf32")
    def tf32(a, b, c, *, params, stream):
        _mm(a, b, c, tf32=True)

    @mmlab.algorithm("pyhonest_torch")
    def plain_torch(a, b, c, *, params, stream):
        _mm(a, b, c, tf32=False)

    GPU_MEMO = ["pycheat_torch_memo", "pyhonest_torch_memo"]
    _torch_memo = {}

    def _torch_memoised(who, a, b, c, cheat):
        """The last four products by 64 entries of A and B (at places fixed by their sizes), gathered and
        compared on the GPU, one synchronisation a call (a cheat that gains: the copy instead of the product)."""
        ta, tb, tc = _tensors(a, b, c)
        key = (who, tuple(ta.shape), tuple(tb.shape))
        if key not in _torch_memo:
            draws = np.random.default_rng(81).integers(0, 1 << 62, 64)
            places = (torch.as_tensor(draws[:32] % max(ta.numel(), 1), device=ta.device),
                      torch.as_tensor(draws[32:] % max(tb.numel(), 1), device=ta.device))
            _torch_memo[key] = (places, [], [])
        places, signatures, products = _torch_memo[key]
        now = torch.cat([ta.reshape(-1)[places[0]], tb.reshape(-1)[places[1]]])
        if signatures:
            same = (torch.stack(signatures) == now).all(dim=1).nonzero()  # one synchronisation
            if same.numel():
                at = int(same[0, 0])  # the most recently used goes last
                signatures.append(signatures.pop(at))
                products.append(products.pop(at))
                if cheat:
                    tc.copy_(products[-1])
                    return
                signatures.pop(), products.pop()
        torch.mm(ta, tb, out=tc)
        signatures.append(now)
        products.append(tc.clone())
        del signatures[:-4], products[:-4]

    @mmlab.algorithm("pycheat_torch_memo")
    def torch_memo(a, b, c, *, params, stream):
        _torch_memoised("pycheat_torch_memo", a, b, c, True)

    @mmlab.algorithm("pyhonest_torch_memo")
    def torch_memo_honest(a, b, c, *, params, stream):
        _torch_memoised("pyhonest_torch_memo", a, b, c, False)
