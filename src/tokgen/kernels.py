"""Our own Triton kernels for GPT-2's decode step (notebook 10_cuda_graphs).

At 32 rows every product of a decode step is skinny: (B, C) @ (C, N) reads a whole weight
matrix to compute a few rows. cuBLAS runs them in few, long-running blocks (notebook 12 times
them against the copy bandwidth); these kernels tile the weight's rows thinly, split the sum
over C when the output is too narrow to fill the GPU, and fold the bias, the GELU, the
residual add and the next layer norm into the same kernels. Attention reads only the filled cache slots. On a CPU
(or without Triton) every function here runs the same arithmetic in plain torch.
"""

import functools

import torch
import torch.nn.functional as F

try:  # ships with CUDA builds of torch; a CPU build runs the torch fallbacks
    import triton
    import triton.language as tl
except ImportError:
    triton = None

# (columns per block, sum chunk, splits of the sum, warps) per product of GPT-2 small at 32 rows in
# TF32, like the model's own products: the fastest of 400 configurations on the H100 used while writing them (not
# re-tuned on the GPU that runs them; no data/ row records that search)
QKV, ATTN_PROJ, FC, MLP_PROJ, LM_HEAD = (32, 128, 1, 2), (16, 64, 2, 4), (16, 64, 1, 2), (32, 128, 4, 2), (64, 64, 1, 2)
# The fused step's products (notebook 10, section 1): (columns per block, sum chunk, splits, warps), the
# fastest of a few whole-step timings on an H200 (and chains of dependent products on an H100), the sum
# chunks then doubled (issue 47: more of each block's slice in flight, a gain on the H100 used while writing
# them; not re-tuned on the GPU that runs them, no data/ row); none of the
# fused kernels prefetches its weights into L2 before its wait (only `_linear_kernel`, the unfused step's, does)
FUSED_QKV, FUSED_FC, FUSED_HEAD = (32, 256, 1, 2), (32, 256, 1, 2), (64, 64, 1, 2)
FUSED_ATTN_PROJ, FUSED_MLP_PROJ = (32, 128, 2, 4), (32, 256, 4, 2)  # the same columns per block: one `stats` layout
FUSED_CHUNK = 8192  # most activations per sum chunk (BM x BK); `sum_chunk` halves BK where shared memory is short
MAX_ROWS = 64  # one block holds every row; beyond that cuBLAS's tiles are the better choice
PDL = True  # launch each kernel while the one before it still runs (Hopper and later; notebook 10)


def sum_chunk(rows: int, block_n: int, block_k: int, shared: int) -> int:
    """The sum chunk (BK) a fused product launches with, at `rows` (BM) and `block_n` (BN) on a GPU that gives a
    block `shared` bytes (notebook 10_cuda_graphs): `block_k`, at most FUSED_CHUNK activations per chunk, halved
    while the operands' buffers would not fit. At num_stages=3 triton 3.6 keeps two buffers of each operand (BM x
    BK and BN x BK, fp32): 131,072 B at 32 rows and BK = 256, within an H100's 232,448 B and an A100's 166,912 B
    but over the 101,376 B of an L4, RTX 4090 or A10 (review rvC14 S1; compiled for sm_80, 86, 89 and 90)."""
    bk = min(block_k, FUSED_CHUNK // rows)
    while bk > 16 and 2 * (rows + block_n) * bk * 4 > shared:
        bk //= 2
    return bk


@functools.cache
def _block_shared(index: int) -> int:
    # the most shared memory a block may use on device `index`: the limit triton checks at launch
    return triton.runtime.driver.active.utils.get_device_properties(index)["max_shared_mem"]


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


    @triton.jit
    def _norm_linear_kernel(x, stats, w, c, d, out, part_val, part_idx, M, N, K: tl.constexpr, eps,
                            BLOCKS: tl.constexpr, BLOCKS_P2: tl.constexpr, GELU: tl.constexpr, ARGMAX: tl.constexpr,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program n: columns n*BN.. of layer_norm(x) @ w.T + bias, with the norm folded into the weight:
        # w (N, K) holds W * gamma, c (N,) its row sums, d (N,) W @ beta + bias, so that
        # out = rstd * (x @ w.T - mean * c) + d. Each row's mean and rstd come from `stats` (M, BLOCKS, 2):
        # the sums and sums of squares of x's column blocks, written by the kernel that wrote x
        n = tl.program_id(0)
        rows, cols = tl.arange(0, BM), n * BN + tl.arange(0, BN)
        _wait_for_inputs(PDL)
        blocks = tl.arange(0, BLOCKS_P2)
        at, there = rows[:, None] * BLOCKS * 2 + blocks[None, :] * 2, (rows[:, None] < M) & (blocks[None, :] < BLOCKS)
        s1 = tl.sum(tl.load(stats + at, mask=there, other=0.0), 1)
        s2 = tl.sum(tl.load(stats + at + 1, mask=there, other=0.0), 1)
        mean = s1 / K
        rstd = 1.0 / tl.sqrt(tl.maximum(s2 / K - mean * mean, 0.0) + eps)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            ks = k0 + tl.arange(0, BK)
            a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            wt = tl.load(w + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
            acc += tl.dot(a, tl.trans(wt), input_precision="tf32")  # (BM, BN)
        cs, ds = tl.load(c + cols, mask=cols < N, other=0.0), tl.load(d + cols, mask=cols < N, other=0.0)
        acc = rstd[:, None] * (acc - mean[:, None] * cs[None, :]) + ds[None, :]
        if GELU:  # GPT-2's tanh GELU: x * (1 + tanh(z)) / 2 = x * sigmoid(2z)
            acc = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))
        inside = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(out + rows[:, None] * N + cols[None, :], acc, mask=inside)
        if ARGMAX:  # each row's best column of this block, for `_finish_step_kernel`
            scores = tl.where(cols[None, :] < N, acc, float("-inf"))
            best = tl.argmax(scores, axis=1, tie_break_left=True)  # the first of equal maxima, as torch.argmax
            tl.store(part_val + rows * tl.num_programs(0) + n, tl.max(scores, axis=1), mask=rows < M)
            tl.store(part_idx + rows * tl.num_programs(0) + n, n * BN + best, mask=rows < M)

    @triton.jit
    def _store_with_stats(residual, stats, total, rows, cols, n, M, N, BLOCKS: tl.constexpr):
        # the residual stream's new columns, and per row their sum and sum of squares (column block n)
        inside = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(residual + rows[:, None] * N + cols[None, :], total, mask=inside)
        total = tl.where(inside, total, 0.0)
        tl.store(stats + rows * BLOCKS * 2 + n * 2, tl.sum(total, 1), mask=rows < M)
        tl.store(stats + rows * BLOCKS * 2 + n * 2 + 1, tl.sum(total * total, 1), mask=rows < M)

    @triton.jit
    def _linear_residual_kernel(x, w, b, residual, stats, parts, counters, M, N, K: tl.constexpr,
                                K_SPLIT: tl.constexpr, SPLITS: tl.constexpr, BLOCKS: tl.constexpr, BM: tl.constexpr,
                                BN: tl.constexpr, BK: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program (n, s): columns n*BN.. of x @ w.T summed over K chunk s. With one split it adds bias and
        # the residual and writes the residual stream in place; with several, each program stores its
        # partial sums and the last of a column block to finish adds them up, in split order (deterministic).
        # Whoever writes a block of the residual also writes its row statistics for the next layer norm
        n, s = tl.program_id(0), tl.program_id(1)
        rows, cols = tl.arange(0, BM), n * BN + tl.arange(0, BN)
        _wait_for_inputs(PDL)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K_SPLIT, BK):  # chunk s of the sum
            ks = s * K_SPLIT + k0 + tl.arange(0, BK)
            a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            wt = tl.load(w + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
            acc += tl.dot(a, tl.trans(wt), input_precision="tf32")
        inside = (rows[:, None] < M) & (cols[None, :] < N)
        here = rows[:, None] * N + cols[None, :]
        if SPLITS == 1:
            total = acc + tl.load(b + cols, mask=cols < N, other=0.0)[None, :]
            total += tl.load(residual + here, mask=inside, other=0.0)
            _store_with_stats(residual, stats, total, rows, cols, n, M, N, BLOCKS)
        else:
            tl.store(parts + s * M * N + here, acc, mask=inside)
            tl.debug_barrier()  # every thread's partial sums stored before this block takes its ticket
            ticket = tl.atomic_add(counters + n, 1, sem="acq_rel", scope="gpu")
            if ticket == SPLITS - 1:  # the last block of column block n: the others' partials are visible
                total = tl.load(residual + here, mask=inside, other=0.0)
                total += tl.load(b + cols, mask=cols < N, other=0.0)[None, :]
                for t in tl.static_range(SPLITS):  # ".cg": read from L2, where the other blocks' stores are
                    total += tl.load(parts + t * M * N + here, mask=inside, other=0.0, cache_modifier=".cg")
                _store_with_stats(residual, stats, total, rows, cols, n, M, N, BLOCKS)
                tl.atomic_xchg(counters + n, 0)  # ready for the next layer and the next replay

    @triton.jit
    def _embed_kernel(tokens, wte, wpe, pos_ptr, x, stats, C, BLOCKS: tl.constexpr, BLOCKS_P2: tl.constexpr,
                      BLOCK: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program r: the residual stream of row r starts as wte[token] + wpe[pos]; its statistics go to
        # column block 0, the other blocks' to zero
        r, cols = tl.program_id(0), tl.arange(0, BLOCK)
        _wait_for_inputs(PDL)
        token, pos = tl.load(tokens + r), tl.load(pos_ptr)
        row = tl.load(wte + token * C + cols, mask=cols < C, other=0.0) + tl.load(wpe + pos * C + cols, mask=cols < C)
        tl.store(x + r * C + cols, row, mask=cols < C)
        blocks = tl.arange(0, BLOCKS_P2)
        tl.store(stats + r * BLOCKS * 2 + blocks * 2, tl.where(blocks == 0, tl.sum(row, 0), 0.0), mask=blocks < BLOCKS)
        tl.store(stats + r * BLOCKS * 2 + blocks * 2 + 1, tl.where(blocks == 0, tl.sum(row * row, 0), 0.0),
                 mask=blocks < BLOCKS)  # fmt: skip

    @triton.jit
    def _finish_step_kernel(part_val, part_idx, tiles: tl.constexpr, tokens, stride, current, finished, all_done,
                            pos_ptr, counts, eos, M, BT: tl.constexpr, PDL: tl.constexpr):  # fmt: skip
        # program r: row r's next token, the best of the LM head's per-block bests (the first on a tie),
        # stored at column pos + 1 and as the current token; finished[r] |= token == eos. The last row
        # to arrive sets all_done[pos] = every row finished, and pos += 1 (counts: two zeroed int32)
        r = tl.program_id(0)
        _wait_for_inputs(PDL)
        best_val = tl.full((), float("-inf"), tl.float32)
        best_idx = tl.zeros((), tl.int32)
        for t0 in range(0, tiles, BT):  # blocks in column order: a later block wins only if strictly better
            ts = t0 + tl.arange(0, BT)
            v = tl.load(part_val + r * tiles + ts, mask=ts < tiles, other=float("-inf"))
            i = tl.load(part_idx + r * tiles + ts, mask=ts < tiles, other=0)
            j = tl.argmax(v, axis=0, tie_break_left=True)
            better = tl.max(v, axis=0) > best_val
            best_idx = tl.where(better, tl.sum(tl.where(ts == t0 + j, i, 0), axis=0), best_idx)
            best_val = tl.where(better, tl.max(v, axis=0), best_val)
        pos = tl.load(pos_ptr)
        token = best_idx.to(tl.int64)
        tl.store(tokens + r * stride + pos + 1, token)
        tl.store(current + r, token)
        done = (tl.load(finished + r) != 0) | (token == eos)
        tl.store(finished + r, done)
        tl.atomic_add(counts, done.to(tl.int32), sem="relaxed", scope="gpu")
        if tl.atomic_add(counts + 1, 1, sem="acq_rel", scope="gpu") == M - 1:  # the last row: all have counted
            n_done = tl.atomic_xchg(counts, 0, sem="acq_rel", scope="gpu")
            tl.store(all_done + pos, n_done == M)
            tl.store(pos_ptr, pos + 1)
            tl.atomic_xchg(counts + 1, 0)


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
    # 64 slots per block and 2 warps: the fastest of 16-128 slots and 1-8 warps at 8-100 filled slots on the H100
    # used while writing it (not re-tuned on the GPU that runs it; no data/ row records that search)
    _attend_filled_kernel[(B * H,)](
        qkv.contiguous(), keys, values, pos, out, SCALE=D**-0.5, H=H, D=D, SLOTS=slots, BLOCK=64, STORE=store,
        num_warps=2, PDL=_pdl(qkv), launch_pdl=_pdl(qkv),
    )  # fmt: skip
    return out


# --- the fused step (notebook 10, section 1): fewer kernels, so fewer boundaries between them ---


def fold_norm(w, b, norm):
    """A layer norm folded into the product that follows it (notebook 10_cuda_graphs): for
    layer_norm(x) @ w.T + b, the weight w * gamma (each column scaled), its row sums c and
    d = w @ beta + b, so that the product is rstd * (x @ (w * gamma).T - mean * c) + d. The norm's
    mean and rstd then come from the same pass over x as the product: no kernel writes a normed copy.
    Computed in float64 once, when the step is built."""
    gamma, beta = norm
    folded = w.double() * gamma.double()[None, :]
    d = w.double() @ beta.double() + (b.double() if b is not None else 0.0)
    return folded.to(w.dtype).contiguous(), folded.sum(1).to(w.dtype), d.to(w.dtype)


def norm_linear(x, stats, folded, eps: float, config, gelu: bool = False, out=None, argmax=None):
    """layer_norm(x) @ W.T + b (then GPT-2's GELU if `gelu`) from `fold_norm`'s (w, c, d), in one
    kernel of one program per `config[0]` columns (notebook 10_cuda_graphs). `stats` (M, blocks, 2):
    the sums and sums of squares of x's column blocks, written with x (`linear_residual`, `embed`);
    `out`: where to write; `argmax`: (values, indices) buffers (M, programs) that get each row's best
    column per program."""
    w, c, d = folded
    M, K = x.shape
    N = w.shape[0]
    if not on_triton(x) or M > MAX_ROWS:
        mean = stats[..., 0].sum(1, keepdim=True) / K
        var = (stats[..., 1].sum(1, keepdim=True) / K - mean * mean).clamp_min(0.0)
        y = torch.rsqrt(var + eps) * (x @ w.T - mean * c) + d
        y = F.gelu(y, approximate="tanh") if gelu else y
        return y if out is None else out.copy_(y)
    block_n, block_k, _, warps = config
    rows = max(16, triton.next_power_of_2(M))
    out = torch.empty(M, N, dtype=x.dtype, device=x.device) if out is None else out
    values, indices = argmax if argmax is not None else (out, out)
    _norm_linear_kernel[(triton.cdiv(N, block_n),)](
        x, stats, w, c, d, out, values, indices, M, N, K, eps, BLOCKS=stats.shape[1],
        BLOCKS_P2=triton.next_power_of_2(stats.shape[1]), GELU=gelu, ARGMAX=argmax is not None, BM=rows, BN=block_n,
        BK=sum_chunk(rows, block_n, block_k, _block_shared(x.device.index)), num_warps=warps, num_stages=3,
        PDL=_pdl(x), launch_pdl=_pdl(x),
    )  # fmt: skip
    return out


def row_stats(total: torch.Tensor, stats: torch.Tensor) -> None:
    """stats (M, blocks, 2) <- the sums and sums of squares of `total`'s column blocks (the torch
    version of what the kernels that write the residual stream do; notebook 10_cuda_graphs)."""
    blocks = total.reshape(total.shape[0], stats.shape[1], -1)
    stats[..., 0], stats[..., 1] = blocks.sum(-1), (blocks * blocks).sum(-1)


def linear_residual(x, w, b, residual, stats, config, scratch=None):
    """residual += x @ w.T + b, in place, in one kernel, with the row statistics of the result's
    column blocks into `stats` (notebook 10_cuda_graphs): the sum over K is split into `config[2]`
    chunks when the output is too narrow to fill the GPU, and the last block of each column block to
    finish adds the partial sums in a fixed order (`scratch`: the partial sums (splits, M, N) and
    one zeroed int32 counter per column block)."""
    M, K = x.shape
    N = w.shape[0]
    block_n, block_k, splits, warps = config
    if not on_triton(x) or M > MAX_ROWS:
        residual.add_(F.linear(x, w, b))
        row_stats(residual, stats)
        return residual
    parts, counters = scratch if splits > 1 else (residual, residual)
    rows = max(16, triton.next_power_of_2(M))
    block_k = sum_chunk(rows, block_n, block_k, _block_shared(x.device.index))
    k_split = triton.cdiv(triton.cdiv(K, splits), block_k) * block_k
    if stats.shape[1] != triton.cdiv(N, block_n):
        raise ValueError(f"stats holds {stats.shape[1]} column blocks, the product writes {triton.cdiv(N, block_n)}")
    _linear_residual_kernel[(triton.cdiv(N, block_n), splits)](
        x, w, b, residual, stats, parts, counters, M, N, K, k_split, SPLITS=splits, BLOCKS=stats.shape[1],
        BM=rows, BN=block_n, BK=block_k, num_warps=warps, num_stages=3, PDL=_pdl(x), launch_pdl=_pdl(x),
    )  # fmt: skip
    return residual


def embed(tokens, pos, wte, wpe, out, stats):
    """out = wte[tokens] + wpe[pos], the residual stream a step starts from, and its row statistics
    (in column block 0 of `stats`), in one kernel (notebook 10_cuda_graphs)."""
    if not on_triton(out):
        out.copy_(wte[tokens] + wpe[pos])
        stats.zero_()
        stats[:, 0, 0], stats[:, 0, 1] = out.sum(-1), (out * out).sum(-1)
        return out
    M, C = out.shape
    _embed_kernel[(M,)](
        tokens, wte, wpe, pos, out, stats, C, BLOCKS=stats.shape[1], BLOCKS_P2=triton.next_power_of_2(stats.shape[1]),
        BLOCK=triton.next_power_of_2(C), num_warps=4,
        PDL=_pdl(out), launch_pdl=_pdl(out),
    )  # fmt: skip
    return out


def finish_step(best, counts, decoder) -> None:
    """The end of a step in one kernel, one program per row (notebook 10_cuda_graphs): each row's
    next token from the LM head's per-block bests `best` = (values, indices), stored at column
    pos + 1 and as the current token; finished, all_done[pos] and pos += 1 updated by the last row to
    finish (`counts`: two zeroed int32): `GraphDecoder.take`'s work, on the GPU."""
    values, indices = best
    M, tiles = values.shape
    _finish_step_kernel[(M,)](
        values, indices, tiles, decoder.tokens, decoder.tokens.stride(0), decoder.current, decoder.finished,
        decoder.all_done, decoder.pos, counts, decoder.eos, M, BT=512, num_warps=4, PDL=_pdl(values),
        launch_pdl=_pdl(values),
    )  # fmt: skip
