"""tcgemm.matmul on CuPy and JAX arrays (each skips when not installed, or
without an sm_90 GPU)."""

import pytest

import tcgemm
from conftest import require_gpu


@pytest.fixture(autouse=True)
def _needs_a_gpu():
    require_gpu()


def small_ints(np, shape, seed):
    return np.random.default_rng(seed).integers(-3, 4, size=shape).astype(np.float32)


def test_cupy_in_cupy_out():
    cp = pytest.importorskip("cupy")
    np = pytest.importorskip("numpy")
    a_host, b_host = small_ints(np, (96, 64), 1), small_ints(np, (64, 80), 2)
    a = cp.asarray(a_host).astype(cp.float16)
    b = cp.asarray(b_host).astype(cp.float16)
    c = tcgemm.matmul(a, b)
    assert isinstance(c, cp.ndarray) and c.dtype == cp.float16 and c.shape == (96, 80)
    assert (cp.asnumpy(c).astype(np.float32) == a_host @ b_host).all()
    c32 = tcgemm.matmul(a, b.T.copy().T, out_dtype="fp32")  # column-major b
    assert (cp.asnumpy(c32) == a_host @ b_host).all()
    out = cp.zeros((96, 80), dtype=cp.float32)
    tcgemm.matmul(a, b, out=out, alpha=2.0)
    assert (cp.asnumpy(out) == 2 * (a_host @ b_host)).all()


def test_cupy_batched_broadcast_on_its_current_stream():
    cp = pytest.importorskip("cupy")
    np = pytest.importorskip("numpy")
    a_host, b_host = small_ints(np, (3, 32, 48), 3), small_ints(np, (48, 16), 4)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        a = cp.asarray(a_host).astype(cp.float16)
        b = cp.asarray(b_host).astype(cp.float16)
        c = tcgemm.matmul(a, b)
        stream.synchronize()
    assert (cp.asnumpy(c).astype(np.float32) == a_host @ b_host).all()


def test_cupy_cpu_mismatch_errors():
    cp = pytest.importorskip("cupy")
    np = pytest.importorskip("numpy")
    a = cp.ones((8, 8), dtype=cp.float16)
    with pytest.raises(tcgemm.InvalidValueError) as info:
        tcgemm.matmul(a, np.ones((8, 8), dtype=np.float16))
    assert info.value.argument == "b"


def test_jax_in_jax_out():
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    jnp = jax.numpy
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU backend here")
    a_host, b_host = small_ints(np, (64, 32), 5), small_ints(np, (32, 48), 6)
    a = jnp.asarray(a_host, dtype=jnp.bfloat16)
    b = jnp.asarray(b_host, dtype=jnp.bfloat16)
    c = tcgemm.matmul(a, b, out_dtype="fp32")
    assert isinstance(c, jax.Array) and c.shape == (64, 48)
    assert (np.asarray(c) == a_host @ b_host).all()
    c16 = tcgemm.matmul(a, b)
    assert (np.asarray(c16.astype(jnp.float32)) == a_host @ b_host).all()


def test_torch_result_from_a_cupy_like_dlpack_input():
    # A torch operand mixed with a DLPack one: b is read through DLPack, a
    # transposed (column-major) view, so its strides must come through too.
    torch = pytest.importorskip("torch")
    cp = pytest.importorskip("cupy")
    np = pytest.importorskip("numpy")
    a_host, b_host = small_ints(np, (16, 8), 7), small_ints(np, (4, 8), 8).T
    a = torch.tensor(a_host, device="cuda", dtype=torch.float16)
    b = cp.asarray(np.ascontiguousarray(b_host.T), dtype=cp.float16).T
    c = tcgemm.matmul(a, b, out_dtype="fp32")
    assert isinstance(c, torch.Tensor)
    assert (c.cpu().numpy() == a_host @ b_host).all()
