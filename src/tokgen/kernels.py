"""Our own Triton kernels for GPT-2's decode step (notebook 10_cuda_graphs).

At 32 rows every product of a decode step is skinny: (B, C) @ (C, N) reads a whole weight
matrix to compute a few rows. cuBLAS runs them in few, long-running blocks (notebook 12: 10-42%
of copy bandwidth); these kernels tile the weight's rows thinly, split the sum over C when the
output is too narrow to fill the GPU, and fold the bias, the GELU, the residual add and the
next layer norm into the same kernels. Attention reads only the filled cache slots. On a CPU
(or without Triton) every function here runs the same arithmetic in plain torch.
"""

import torch
import torch.nn.functional as F

try:  # ships with CUDA builds of torch; a CPU build runs the torch fallbacks
    import triton
    import triton.language as tl
except ImportError:
    triton = None

# (columns per block, sum chunk, splits of the sum, warps) per product of GPT-2 small at 32 rows in
# TF32, like the model's own products: the fastest of 400 configurations on our H100 (notebook 10)
QKV, ATTN_PROJ, FC, MLP_PROJ, LM_HEAD = (32, 128, 1, 2), (16, 64, 2, 4), (16, 64, 1, 2), (32, 128, 4, 2), (64, 64, 1, 2)
MAX_ROWS = 64  # one block holds every row; beyond that cuBLAS's tiles are the better choice
PDL = True  # launch each kernel while the one before it still runs (Hopper and later; notebook 10)


def on_triton(x: torch.Tensor) -> bool:
    """Run our kernels on `x`? A CUDA tensor with Triton installed (notebook 10_cuda_graphs)."""
    return triton is not None and x.is_cuda


def _pdl(x: torch.Tensor) -> bool:
    # programmatic dependent launch needs compute capability 9 (Hopper) or later; inductor launches
    # the kernels it compiles in (graph_filled_attention) its own way
    return PDL and not torch.compiler.is_compiling() and torch.cuda.get_device_capability(x.device)[0] >= 9


if triton is not None:

    @triton.jit
    def _wait_for_inputs(PDL: tl.constexpr):
        # launched early (PDL): wait here until the kernel before has finished and its writes are
        # visible, then let the next kernel launch, so that its blocks wait on the GPU, not the launch
        if PDL:
            tl.extra.cuda.gdc_wait()
            tl.extra.cuda.gdc_launch_dependents()

    @triton.jit
    def _prefetch_to_l2(ptrs):
        tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l", [ptrs], dtype=tl.int32,
                                  is_pure=False, pack=1)  # fmt: skip

    @triton.jit
    def _linear_kernel(x, w, b, out, M, N, K, K_SPLIT, BIAS: tl.constexpr, GELU: tl.constexpr, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program (n, s): columns n*BN.. of x (M, K) @ w (N, K).T, summed over K chunk s -> out[s] (M, N)
        n, s = tl.program_id(0), tl.program_id(1)
        rows, cols = tl.arange(0, BM), n * BN + tl.arange(0, BN)
        lo, hi = s * K_SPLIT, tl.minimum((s + 1) * K_SPLIT, K)
        if PDL:  # no kernel writes the weights: start our slice of them into L2 before waiting for x
            for k0 in range(lo, hi, BK):
                lines = tl.minimum(k0 + tl.arange(0, BK // 32) * 32, K - 1)  # one address per 128-byte line
                _prefetch_to_l2(w + tl.minimum(cols, N - 1)[:, None] * K + lines[None, :])
        _wait_for_inputs(PDL)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(lo, hi, BK):
            ks = k0 + tl.arange(0, BK)
            a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            wt = tl.load(w + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
            acc += tl.dot(a, tl.trans(wt), input_precision="tf32")  # (BM, BN), TF32 like the model's own products
        if BIAS:
            acc += tl.load(b + cols, mask=cols < N, other=0.0)[None, :]
        if GELU:  # GPT-2's tanh GELU: x * (1 + tanh(z)) / 2 = x * sigmoid(2z)
            acc = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))
        inside = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(out + s * M * N + rows[:, None] * N + cols[None, :], acc, mask=inside)

    @triton.jit
    def _add_norm_kernel(parts, b, residual, ln_w, ln_b, x_out, h_out, M, N, eps, SPLITS: tl.constexpr,
                         BLOCK: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program r, one row: x = residual + bias + the SPLITS partial sums; h = layer_norm(x)
        r, cols = tl.program_id(0), tl.arange(0, BLOCK)
        ok = cols < N
        _wait_for_inputs(PDL)
        x = tl.load(residual + r * N + cols, mask=ok, other=0.0) + tl.load(b + cols, mask=ok, other=0.0)
        for s in tl.static_range(SPLITS):  # unrolled: every load in flight at once
            x += tl.load(parts + (s * M + r) * N + cols, mask=ok, other=0.0)
        tl.store(x_out + r * N + cols, x, mask=ok)
        mean = tl.sum(x, 0) / N
        d = tl.where(ok, x - mean, 0.0)
        h = d * tl.rsqrt(tl.sum(d * d, 0) / N + eps)
        h = h * tl.load(ln_w + cols, mask=ok, other=0.0) + tl.load(ln_b + cols, mask=ok, other=0.0)
        tl.store(h_out + r * N + cols, h, mask=ok)

    @triton.jit
    def _attend_filled_kernel(qkv, keys, values, pos_ptr, out, SCALE: tl.constexpr, H: tl.constexpr,
                              D: tl.constexpr, SLOTS: tl.constexpr, BLOCK: tl.constexpr,
                              STORE: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # one program per (row b, head h); qkv: (B, 3, H, D), keys/values: (B, H, SLOTS, D), out: (B, H, D)
        b, h = tl.program_id(0) // H, tl.program_id(0) % H
        d = tl.arange(0, D)
        _wait_for_inputs(PDL)
        here = b * 3 * H * D + h * D
        q = tl.load(qkv + here + d)
        v_new = tl.load(qkv + here + 2 * H * D + d)
        m = tl.sum(q * tl.load(qkv + here + H * D + d)) * SCALE  # this token's own score opens the softmax
        total = tl.full((), 1.0, tl.float32)
        acc = v_new
        pos = tl.load(pos_ptr)  # slots 0 .. pos-1 are filled: the loop stops there, on the GPU
        cache = (b * H + h) * SLOTS * D
        if STORE:  # this token's key and value into slot pos, which the loop below does not read
            tl.store(keys + cache + pos * D + d, tl.load(qkv + here + H * D + d))
            tl.store(values + cache + pos * D + d, v_new)
        for start in range(0, pos, BLOCK):  # online softmax over blocks of filled slots (one for N <= 64)
            s = start + tl.arange(0, BLOCK)
            filled = s < pos
            at = cache + s[:, None] * D + d[None, :]  # (BLOCK, D)
            k = tl.load(keys + at, mask=filled[:, None], other=0.0)
            score = tl.where(filled, tl.sum(k * q[None, :], 1) * SCALE, float("-inf"))
            m_new = tl.maximum(m, tl.max(score, 0))
            p = tl.exp(score - m_new)
            rescale = tl.exp(m - m_new)
            v = tl.load(values + at, mask=filled[:, None], other=0.0)
            acc = acc * rescale + tl.sum(p[:, None] * v, 0)
            total = total * rescale + tl.sum(p, 0)
            m = m_new
        tl.store(out + (b * H + h) * D + d, acc / total)


def _products(x, w, b, config, gelu=False, bias=True):
    """(splits, M, N) partial sums of x @ w.T (with bias and GELU when there is one split)."""
    M, K = x.shape
    N = w.shape[0]
    block_n, block_k, splits, warps = config
    k_split = triton.cdiv(triton.cdiv(K, splits), block_k) * block_k
    out = torch.empty(splits, M, N, dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(N, block_n), splits)
    _linear_kernel[grid](
        x, w, b if b is not None else x, out, M, N, K, k_split, BIAS=bias and b is not None, GELU=gelu,
        BM=max(16, triton.next_power_of_2(M)), BN=block_n, BK=block_k, num_warps=warps, num_stages=3,
        PDL=_pdl(x), launch_pdl=_pdl(x),
    )  # fmt: skip
    return out


def linear(x, w, b, config, gelu: bool = False):
    """x (M, K) @ w (N, K).T + b, then GPT-2's GELU if `gelu`, in one kernel: one program per
    `config[0]` output columns, all M rows (notebook 10_cuda_graphs). `b` may be None."""
    if not on_triton(x) or x.shape[0] > MAX_ROWS:
        y = F.linear(x, w, b)
        return F.gelu(y, approximate="tanh") if gelu else y
    return _products(x.contiguous(), w, b, (*config[:2], 1, config[3]), gelu=gelu)[0]


def linear_add_norm(x, w, b, residual, norm, eps: float, config):
    """The residual stream after a projection and the next layer norm of it, in two kernels:
    `residual + x @ w.T + b` (split over `config[2]` chunks of the sum when the output is too
    narrow to fill the GPU) and `layer_norm(that, *norm)`, one program per row adding the
    partial sums, the bias and the residual before normalizing. Returns (new residual, normed).
    Notebook 10_cuda_graphs."""
    if not on_triton(x) or x.shape[0] > MAX_ROWS:
        new = residual + F.linear(x, w, b)
        return new, F.layer_norm(new, new.shape[-1:], *norm, eps)
    M, N = x.shape[0], w.shape[0]
    parts = _products(x.contiguous(), w, b, config, bias=False)  # (splits, M, N)
    new, normed = torch.empty(M, N, dtype=x.dtype, device=x.device), torch.empty(M, N, dtype=x.dtype, device=x.device)
    _add_norm_kernel[(M,)](
        parts, b, residual, *norm, new, normed, M, N, eps, SPLITS=config[2], BLOCK=triton.next_power_of_2(N),
        num_warps=4, PDL=_pdl(x), launch_pdl=_pdl(x),
    )  # fmt: skip
    return new, normed


def attend_all_slots(q, k, v, keys, values, past):
    """One query per (row, head) over every cache slot, masked to the filled ones (notebook 10_cuda_graphs).

    q, k, v: (B, H, 1, D) this token's; keys, values: (B, H, capacity, D); past: (1, 1, 1, capacity).
    Products and sums, which inductor fuses with the mask and the softmax into reductions over the
    whole cache, filled or not (exercise 3 of notebook 10: matrix products instead).
    """
    scale = q.shape[-1] ** -0.5
    cached = (q * keys).sum(-1).unsqueeze(2).masked_fill(~past, float("-inf"))  # (B, H, 1, capacity)
    scores = torch.cat([cached, (q * k).sum(-1, keepdim=True)], dim=-1)  # (B, H, 1, capacity + 1)
    w = torch.softmax(scores * scale, dim=-1)
    return (w[..., :-1].transpose(-1, -2) * values).sum(-2, keepdim=True) + w[..., -1:] * v  # (B, H, 1, D)


def attend_filled_slots(qkv, keys, values, pos, store: bool = False):
    """The same attention as `attend_all_slots` in one Triton kernel that reads only the filled
    slots: the loop runs to `pos`, read on the GPU, so a CUDA graph of any step stays valid and
    step i reads i slots, not the capacity (notebook 10_cuda_graphs). On a CPU: every slot, masked.
    `store` also writes this token's key and value into slot `pos` (not under torch.compile,
    which would copy the whole cache to keep its inputs unchanged).

    qkv: (B, 3C) this token's projections; keys, values: (B, H, capacity, D) -> (B, H, 1, D).
    """
    B, H, slots, D = keys.shape
    if not on_triton(qkv):
        q, k, v = qkv.view(B, 3, H, 1, D).unbind(1)
        if store:
            keys.index_copy_(2, pos, k)
            values.index_copy_(2, pos, v)
        return attend_all_slots(q, k, v, keys, values, (torch.arange(slots, device=pos.device) < pos)[None, None, None])
    out = torch.empty(B, H, 1, D, dtype=qkv.dtype, device=qkv.device)
    # 64 slots per block and 2 warps: the fastest of 16-128 slots and 1-8 warps on our H100 at 8-100 filled slots
    _attend_filled_kernel[(B * H,)](
        qkv.contiguous(), keys, values, pos, out, SCALE=D**-0.5, H=H, D=D, SLOTS=slots, BLOCK=64, STORE=store,
        num_warps=2, PDL=_pdl(qkv), launch_pdl=_pdl(qkv),
    )  # fmt: skip
    return out
