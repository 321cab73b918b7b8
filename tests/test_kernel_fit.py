"""The fused step's Triton kernels fit the shared memory of the GPUs readers re-run on (review rvC14 S1): the sum
chunk `tokgen.kernels.sum_chunk` picks is the H100-tuned one where it fits, and halved where a GPU gives a block
less shared memory. The byte counts are what triton 3.6.0 compiled for sm_80, 86, 89 and 90 (two buffers of each
operand at num_stages=3): 131,072 B at 32 rows and BK = 256, 65,536 B at BK = 128, 98,304 B at 16 rows."""

import pytest

from tokgen import kernels

H100, A100, ADA = 232_448, 166_912, 101_376  # the most shared memory a block may use (triton's max_shared_mem)
FUSED = [kernels.FUSED_QKV, kernels.FUSED_FC, kernels.FUSED_HEAD, kernels.FUSED_ATTN_PROJ, kernels.FUSED_MLP_PROJ]


def buffers(rows, block_n, bk):
    return 2 * (rows + block_n) * bk * 4


@pytest.mark.parametrize("rows", [16, 32, 64])
@pytest.mark.parametrize("config", FUSED)
def test_the_h100_and_a100_launch_with_the_chunk_the_h100_was_tuned_with(config, rows):
    tuned = min(config[1], kernels.FUSED_CHUNK // rows)
    for shared in (H100, A100):
        assert kernels.sum_chunk(rows, config[0], config[1], shared) == tuned


@pytest.mark.parametrize("rows", [16, 32, 64])
@pytest.mark.parametrize("config", FUSED)
def test_a_99_kib_gpu_gets_a_chunk_whose_buffers_fit(config, rows):
    bk = kernels.sum_chunk(rows, config[0], config[1], ADA)
    assert buffers(rows, config[0], bk) <= ADA and bk >= 16 and bk & (bk - 1) == 0
    assert bk == min(config[1], kernels.FUSED_CHUNK // rows) or buffers(rows, config[0], 2 * bk) > ADA  # halved no more


def test_at_32_rows_the_qkv_product_halves_its_chunk_on_a_99_kib_gpu():
    assert buffers(32, 32, 256) == 131_072 > ADA  # what triton compiled for sm_89 and refused to launch
    assert kernels.sum_chunk(32, *kernels.FUSED_QKV[:2], ADA) == 128
    assert kernels.sum_chunk(16, *kernels.FUSED_QKV[:2], ADA) == 256  # 98,304 B: fits as it was
