"""GPT-2's decode step written out by hand over the model's weights (notebook 10_cuda_graphs).

No transformers machinery per step (cache objects, mask builders, output dataclasses): the
same arithmetic as `GPT2LMHeadModel` on one new token, with keys and values kept in
pre-allocated buffers and the position in a device tensor, so a whole step can be compiled
and captured in a CUDA graph.
"""

import functools

import torch
import torch.nn.functional as F

try:  # ships with CUDA builds of torch; a CPU build runs the attention in plain torch
    import triton
    import triton.language as tl
except ImportError:
    triton = None


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


if triton is not None:

    @triton.jit
    def _attend_filled_kernel(
        qkv,
        keys,
        values,
        pos_ptr,
        out,
        SCALE: tl.constexpr,
        H: tl.constexpr,
        D: tl.constexpr,
        SLOTS: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        # one program per (row b, head h); qkv: (B, 3, H, D), keys/values: (B, H, SLOTS, D), out: (B, H, D)
        b, h = tl.program_id(0) // H, tl.program_id(0) % H
        d = tl.arange(0, D)
        here = b * 3 * H * D + h * D
        q = tl.load(qkv + here + d)
        v_new = tl.load(qkv + here + 2 * H * D + d)
        m = tl.sum(q * tl.load(qkv + here + H * D + d)) * SCALE  # this token's own score opens the softmax
        total = tl.full((), 1.0, tl.float32)
        acc = v_new
        pos = tl.load(pos_ptr)  # slots 0 .. pos-1 are filled: the loop stops there, on the GPU
        cache = (b * H + h) * SLOTS * D
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


def attend_filled_slots(qkv, keys, values, pos):
    """The same attention as `attend_all_slots` in one Triton kernel that reads only the filled
    slots: the loop runs to `pos`, read on the GPU, so a CUDA graph of any step stays valid and
    step i reads i slots, not the capacity (notebook 10_cuda_graphs).

    qkv: (B, 3C) this token's projections; keys, values: (B, H, capacity, D) -> (B, H, 1, D).
    """
    B, H, slots, D = keys.shape
    out = torch.empty(B, H, 1, D, dtype=qkv.dtype, device=qkv.device)
    # 64 slots per block and 2 warps: the fastest of 16-128 slots and 1-8 warps on our H100 at 8-100 filled slots
    _attend_filled_kernel[(B * H,)](
        qkv.contiguous(), keys, values, pos, out, SCALE=D**-0.5, H=H, D=D, SLOTS=slots, BLOCK=64, num_warps=2
    )
    return out


def handwritten_forward(weights, keys, values, slots, tokens, pos, heads: int, eps: float, filled_only: bool = False):
    """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab), new keys, new values.

    weights: as returned by `gpt2_weights`; keys, values: (layers, B, heads, capacity, head_dim),
    slots: arange(capacity). The cache is only read: attention covers the cached slots before
    `pos` plus this token's own key and value, and the caller stores the new ones
    ((layers, B, heads, 1, head_dim) each). A compiled function that wrote into a slice of its
    input would copy the whole cache back on every call. `filled_only` attends with the Triton
    kernel of `attend_filled_slots` (CUDA only). Introduced in notebook 10_cuda_graphs.
    """
    wte, wpe, (lnf_w, lnf_b), blocks = weights
    B, C = tokens.shape[0], wte.shape[1]
    D = C // heads
    x = wte[tokens] + wpe[pos]  # (B, C)
    past = (slots < pos)[None, None, None]  # (1, 1, 1, capacity): slots holding earlier tokens
    new_keys, new_values = [], []
    for layer, (ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, out_w, out_b) in enumerate(
        blocks
    ):
        h = F.layer_norm(x, (C,), ln1_w, ln1_b, eps)
        qkv = F.linear(h, qkv_w, qkv_b)  # (B, 3C)
        q, k, v = qkv.view(B, 3, heads, 1, D).unbind(1)  # (B, H, 1, D) each
        if filled_only:
            a = attend_filled_slots(qkv, keys[layer], values[layer], pos)
        else:
            a = attend_all_slots(q, k, v, keys[layer], values[layer], past)  # (B, H, 1, D)
        x = x + F.linear(a.reshape(B, C), proj_w, proj_b)
        h = F.layer_norm(x, (C,), ln2_w, ln2_b, eps)
        h = F.gelu(F.linear(h, fc_w, fc_b), approximate="tanh")
        x = x + F.linear(h, out_w, out_b)
        new_keys.append(k)
        new_values.append(v)
    x = F.layer_norm(x, (C,), lnf_w, lnf_b, eps)
    return x @ wte.T, torch.stack(new_keys), torch.stack(new_values)  # the LM head shares wte


def gpt2_weights(model):
    """The parameters `handwritten_forward` reads, as nested tuples (notebook 10_cuda_graphs).

    Norms, biases and embeddings are the model's own tensors. The four projection matrices are
    transposed copies, (out, in) like `nn.Linear`'s, where GPT-2 stores them (in, out): for
    products of only B rows cuBLAS picks other kernels for this layout, a little faster on our
    H100 (notebook 10's kernel table). Copies: a decoder built before the model's weights
    change keeps the old ones.
    """
    t = model.transformer

    def linear(conv1d):
        return conv1d.weight.t().contiguous(), conv1d.bias

    blocks = tuple(
        (
            b.ln_1.weight,
            b.ln_1.bias,
            *linear(b.attn.c_attn),
            *linear(b.attn.c_proj),
            b.ln_2.weight,
            b.ln_2.bias,
            *linear(b.mlp.c_fc),
            *linear(b.mlp.c_proj),
        )
        for b in t.h
    )
    return t.wte.weight, t.wpe.weight, (t.ln_f.weight, t.ln_f.bias), blocks


@functools.cache
def compiled_forward(backend: str):
    """`handwritten_forward` compiled once per backend, shared by every step (notebook 10_cuda_graphs).

    Every (batch size, capacity, model) gets its own specialized graph; dynamo's default of 8
    per function is too few for a test suite, so the limit is raised around the call (the call
    only happens at warm-up and capture: replays do not enter Python).
    """
    compiled = torch.compile(handwritten_forward, fullgraph=True, dynamic=False, backend=backend)
    limit = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"

    def forward(*args):
        with torch._dynamo.config.patch({limit: 64}):
            return compiled(*args)

    return forward


class HandwrittenStep:
    """One decode step of a `GPT2LMHeadModel` by `handwritten_forward`, with static KV buffers of
    `capacity` positions; compiled with `compile_backend` when one is given, attending over the
    filled slots only with `filled_only` (a Triton kernel; on a CPU every slot; notebook 10_cuda_graphs)."""

    def __init__(self, model, batch_size: int, capacity: int, compile_backend: str | None = None, filled_only=False):
        cfg = model.config
        if cfg.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"HandwrittenStep implements the tanh GELU, not {cfg.activation_function!r}")
        self.filled_only = filled_only and triton is not None and model.device.type == "cuda"  # CPU: every slot
        self.weights = gpt2_weights(model)
        self.heads, self.eps = cfg.n_head, cfg.layer_norm_epsilon
        wte = self.weights[0]
        shape = (cfg.n_layer, batch_size, cfg.n_head, capacity, cfg.n_embd // cfg.n_head)
        # zeros, not empty: masked-out slots still get a 0 weight in attention, and 0 * NaN = NaN
        self.keys = torch.zeros(shape, dtype=wte.dtype, device=wte.device)
        self.values = torch.zeros_like(self.keys)
        self.slots = torch.arange(capacity, device=wte.device)
        self.forward = compiled_forward(compile_backend) if compile_backend else handwritten_forward

    def __call__(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab); caches slot `pos`."""
        logits, k, v = self.forward(
            self.weights, self.keys, self.values, self.slots, tokens, pos, self.heads, self.eps, self.filled_only
        )
        self.keys.index_copy_(3, pos, k)  # k: (layers, B, H, 1, D) into slot pos of every layer
        self.values.index_copy_(3, pos, v)
        return logits

    def reset(self) -> None:
        """Nothing to clear: slots at or past `pos` are masked out, and each is written before it is read."""
