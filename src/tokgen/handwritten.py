"""GPT-2's decode step written out by hand over the model's weights (notebook 10_cuda_graphs).

No transformers machinery per step (cache objects, mask builders, output dataclasses): the
same arithmetic as `GPT2LMHeadModel` on one new token, with keys and values kept in
pre-allocated buffers and the position in a device tensor, so a whole step can be compiled
and captured in a CUDA graph.
"""

import functools

import torch
import torch.nn.functional as F

from . import kernels
from .kernels import (
    attend_all_slots,
    attend_filled_slots,
    embed,
    finish_step,
    fold_norm,
    linear,
    linear_add_norm,
    linear_residual,
    norm_linear,
    on_triton,
)


def handwritten_forward(weights, keys, values, tokens, pos, heads: int, eps: float, filled_only: bool = False):
    """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab), new keys, new values.

    weights: as returned by `gpt2_weights`; keys, values: (layers, B, heads, capacity, head_dim).
    The cache is only read: attention covers the cached slots before
    `pos` plus this token's own key and value, and the caller stores the new ones
    ((layers, B, heads, 1, head_dim) each). A compiled function that wrote into a slice of its
    input would copy the whole cache back on every call. `filled_only` attends with the Triton
    kernel of `attend_filled_slots` (CUDA only). Introduced in notebook 10_cuda_graphs.
    """
    wte, wpe, (lnf_w, lnf_b), blocks = weights
    B, C = tokens.shape[0], wte.shape[1]
    D = C // heads
    x = wte[tokens] + wpe[pos]  # (B, C)
    past = (torch.arange(keys.shape[3], device=pos.device) < pos)[None, None, None]  # (1, 1, 1, capacity): filled
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


def triton_forward(weights, keys, values, tokens, pos, heads: int, eps: float):
    """`handwritten_forward` on our own kernels (tokgen.kernels), run eagerly: the same logits,
    and the attention kernel stores this token's keys and values in slot `pos` itself.

    Per layer: the QKV product with its bias; attention over the filled slots; the attention
    projection, its bias, the residual add and layer norm 2; the MLP's first product with its
    bias and GELU; its second product, bias, residual add and the *next* layer norm (layer
    1's, ..., the final one): fewer kernels per layer than the compiled `handwritten_forward`
    (notebook 10's kernel tables count both). Introduced in notebook 10_cuda_graphs.
    """
    wte, wpe, final_norm, blocks = weights
    B, C = tokens.shape[0], wte.shape[1]
    x = wte[tokens] + wpe[pos]  # (B, C), the residual stream
    h = F.layer_norm(x, (C,), blocks[0][0], blocks[0][1], eps)
    next_norms = [block[:2] for block in blocks[1:]] + [final_norm]  # the norm each layer's output feeds
    for layer, ((_, _, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, out_w, out_b), next_norm) in enumerate(
        zip(blocks, next_norms)
    ):
        qkv = linear(h, qkv_w, qkv_b, kernels.QKV)  # (B, 3C)
        a = attend_filled_slots(qkv, keys[layer], values[layer], pos, store=True)  # (B, H, 1, D)
        x, h = linear_add_norm(a.reshape(B, C), proj_w, proj_b, x, (ln2_w, ln2_b), eps, kernels.ATTN_PROJ)
        h = linear(h, fc_w, fc_b, kernels.FC, gelu=True)  # (B, 4C)
        x, h = linear_add_norm(h, out_w, out_b, x, next_norm, eps, kernels.MLP_PROJ)
    return linear(h, wte, None, kernels.LM_HEAD)  # (B, vocab); h is final-normed, the LM head shares wte


def gpt2_weights(model):
    """The parameters `handwritten_forward` reads, as nested tuples (notebook 10_cuda_graphs).

    Norms, biases and embeddings are the model's own tensors. The four projection matrices are
    transposed copies, (out, in) like `nn.Linear`'s, where GPT-2 stores them (in, out): for
    products of only B rows cuBLAS picks other kernels for this layout, a little faster on our
    H100 (notebook 10's kernel table). Copies: `tokgen.graphs.decoders_of` rebuilds a decoder
    whose model's weights changed since.
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

    def run(*args):
        with torch._dynamo.config.patch({limit: 64}):
            return compiled(*args)

    return run


class HandwrittenStep:
    """One decode step of a `GPT2LMHeadModel` by `handwritten_forward`, with static KV buffers of
    `capacity` positions; compiled with `compile_backend` when one is given, attending over the
    filled slots only with `filled_only` (our Triton kernel; on a CPU every slot; notebook 10_cuda_graphs)."""

    def __init__(self, model, batch_size: int, capacity: int, compile_backend: str | None = None, filled_only=False):
        cfg = model.config
        if cfg.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"HandwrittenStep implements the tanh GELU, not {cfg.activation_function!r}")
        if model.dtype != torch.float32:  # our kernels and the TF32 products assume fp32 weights
            raise ValueError(f"the handwritten step runs GPT-2 in float32; this model is {model.dtype}")
        self.weights = gpt2_weights(model)
        self.heads, self.eps, self.filled_only = cfg.n_head, cfg.layer_norm_epsilon, filled_only
        wte = self.weights[0]
        shape = (cfg.n_layer, batch_size, cfg.n_head, capacity, cfg.n_embd // cfg.n_head)
        # zeros, not empty: masked-out slots still get a 0 weight in attention, and 0 * NaN = NaN
        self.keys = torch.zeros(shape, dtype=wte.dtype, device=wte.device)
        self.values = torch.zeros_like(self.keys)
        self.forward = compiled_forward(compile_backend) if compile_backend else handwritten_forward

    def __call__(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab); caches slot `pos`."""
        logits, k, v = self.forward(
            self.weights, self.keys, self.values, tokens, pos, self.heads, self.eps, self.filled_only
        )
        self.keys.index_copy_(3, pos, k)  # k: (layers, B, H, 1, D) into slot pos of every layer
        self.values.index_copy_(3, pos, v)
        return logits

    def reset(self) -> None:
        """Nothing to clear: slots at or past `pos` are masked out, and each is written before it is read."""


class TritonStep(HandwrittenStep):
    """The same step by `triton_forward`: our kernels, run eagerly (nothing left for a compiler
    to fuse), the attention kernel storing each token's keys and values (notebook 10_cuda_graphs)."""

    def __init__(self, model, batch_size: int, capacity: int):
        super().__init__(model, batch_size, capacity)  # its weights and caches; triton_forward replaces the forward

    def __call__(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab); caches slot `pos`."""
        return triton_forward(self.weights, self.keys, self.values, tokens, pos, self.heads, self.eps)


class FusedStep:
    """GPT-2's decode step in five kernels per layer, and the end of the step in one (notebook 10,
    section 1): fewer kernels, so fewer kernel boundaries, than `TritonStep`; what the whole fused step saves
    against it (fewer boundaries and, on Hopper, no L2 prefetch of the weights: not separated), notebook 10
    measures (section 3 times the step, section 5 counts its kernels):

    * each layer norm is folded into the product after it (`kernels.fold_norm`): the QKV and MLP-up
      products (and the LM head) normalize with the row sums the writer of the residual stream left;
    * the attention and MLP-down projections add bias and residual themselves, into the residual
      stream in place, their split sums added up by the last block of each column block;
    * one kernel starts the step (the token's embedding plus its position's) and one ends it: the
      LM head writes each block's best token per row, and `finish_step` picks each row's next token
      and does the bookkeeping `GraphDecoder.take` does in six torch kernels.

    The same arithmetic as `handwritten_forward`, in another order (tests compare the logits).
    On a CPU every kernel runs as torch.
    """

    def __init__(self, model, batch_size: int, capacity: int):
        cfg = model.config
        if model.dtype != torch.float32:  # our kernels and the TF32 products assume fp32 weights
            raise ValueError(f"the fused step runs GPT-2 in float32; this model is {model.dtype}")
        t = model.transformer
        self.wte, self.wpe, self.heads, self.eps = t.wte.weight, t.wpe.weight, cfg.n_head, cfg.layer_norm_epsilon
        self.layers = []
        with torch.no_grad():
            for b in t.h:
                qkv = fold_norm(b.attn.c_attn.weight.t(), b.attn.c_attn.bias, (b.ln_1.weight, b.ln_1.bias))
                proj = (b.attn.c_proj.weight.t().contiguous(), b.attn.c_proj.bias)
                fc = fold_norm(b.mlp.c_fc.weight.t(), b.mlp.c_fc.bias, (b.ln_2.weight, b.ln_2.bias))
                down = (b.mlp.c_proj.weight.t().contiguous(), b.mlp.c_proj.bias)
                self.layers.append((qkv, proj, fc, down))
            self.head = fold_norm(self.wte, None, (t.ln_f.weight, t.ln_f.bias))  # the LM head shares wte
        B, C, V, device = batch_size, cfg.n_embd, cfg.vocab_size, self.wte.device
        shape = (cfg.n_layer, B, cfg.n_head, capacity, C // cfg.n_head)
        self.keys, self.values = torch.zeros(shape, device=device), torch.zeros(shape, device=device)
        self.x, self.logits = torch.zeros(B, C, device=device), torch.zeros(B, V, device=device)  # residual, logits
        self.qkv, self.h = torch.zeros(B, 3 * C, device=device), torch.zeros(B, 4 * C, device=device)
        blocks = -(-C // kernels.FUSED_MLP_PROJ[0])  # column blocks of the residual stream's writers
        self.stats = torch.zeros(B, blocks, 2, device=device)  # per row and block: sum, sum of squares
        self.scratch = [  # per projection: partial sums of its splits, one arrival counter per column block
            (torch.zeros(cfg_[2], B, C, device=device), torch.zeros(blocks, dtype=torch.int32, device=device))
            for cfg_ in (kernels.FUSED_ATTN_PROJ, kernels.FUSED_MLP_PROJ)
        ]
        tiles = -(-V // kernels.FUSED_HEAD[0])
        self.best = (torch.zeros(B, tiles, device=device), torch.zeros(B, tiles, dtype=torch.int32, device=device))
        self.counts = torch.zeros(2, dtype=torch.int32, device=device)  # finish_step's: rows finished, rows arrived

    def __call__(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab); caches slot `pos`."""
        B, C = self.x.shape
        x, stats = self.x, self.stats  # the residual stream (B, C) and its rows' sums, for the next norm
        embed(tokens, pos, self.wte, self.wpe, x, stats)
        for layer, (qkv_w, proj, fc, down) in enumerate(self.layers):
            qkv = norm_linear(x, stats, qkv_w, self.eps, kernels.FUSED_QKV, out=self.qkv)  # (B, 3C)
            a = attend_filled_slots(qkv, self.keys[layer], self.values[layer], pos, store=True)  # (B, H, 1, D)
            linear_residual(a.reshape(B, C), *proj, x, stats, kernels.FUSED_ATTN_PROJ, self.scratch[0])
            h = norm_linear(x, stats, fc, self.eps, kernels.FUSED_FC, gelu=True, out=self.h)  # (B, 4C)
            linear_residual(h, *down, x, stats, kernels.FUSED_MLP_PROJ, self.scratch[1])
        return norm_linear(x, stats, self.head, self.eps, kernels.FUSED_HEAD, out=self.logits, argmax=self.best)

    def decode(self, decoder) -> None:
        """One whole decode step on `decoder`'s tensors (`tokgen.graphs.GraphDecoder`): the logits,
        then the next tokens and the bookkeeping, in one kernel on a GPU."""
        logits = self(decoder.current, decoder.pos)
        if on_triton(logits) and logits.shape[0] <= kernels.MAX_ROWS:
            finish_step(self.best, self.counts, decoder)
        else:
            decoder.take(logits.argmax(dim=-1))

    def reset(self) -> None:
        """Nothing to clear: slots at or past `pos` are never read, and each is written before it is read."""
